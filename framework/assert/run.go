package assert

import (
	"context"
	"errors"
	"fmt"

	"github.com/tkg-e2e/harness/framework/artifacts"
)

// Outcome is what Run found on every target.
type Outcome struct {
	Check string
	// Checked are the targets the check covered, and Reports their last
	// reports, in the same order.
	Checked []Target
	Reports []Report
	// Failures has one error per failing target (its summary, or why a
	// dependent check failed).
	Failures []error
	// Markdown is the whole report, redacted, as written to <check>.md.
	Markdown string
	// MarkdownPath and HTMLPath are the files written (absolute paths).
	MarkdownPath, HTMLPath string
}

// Err is nil when every target passed; otherwise every failure followed by
// the whole report, so one message shows everything.
func (o *Outcome) Err() error {
	if len(o.Failures) == 0 {
		return nil
	}
	return fmt.Errorf("%w\n\n%s", errors.Join(o.Failures...), o.Markdown)
}

// Run checks every target whose role is in the registry and which the check
// covers, one after the other, and writes <check>.md and <check>.html
// through w. A target that fails does not stop the others: the report shows
// them all. Run's own error is for what stops the check from running at all
// (bad input, no target covered, an unreadable cluster, a file not written);
// failures of targets are in the Outcome.
func Run(ctx context.Context, c Check, targets []Target, w *artifacts.Writer, opts Options) (*Outcome, error) {
	if c == nil || w == nil {
		return nil, errors.New("assert.Run: a check and an artifacts Writer are required")
	}
	opts.Targets = targets
	opts = opts.withDefaults(c)
	out := &Outcome{Check: c.Name()}
	for _, t := range targets {
		if !IsRole(t.Role) {
			continue
		}
		rep, err := CheckTarget(ctx, c, t, opts)
		switch {
		case errors.Is(err, ErrNotApplicable):
			continue
		case rep == nil || ctx.Err() != nil:
			return out, err
		}
		out.Checked = append(out.Checked, t)
		out.Reports = append(out.Reports, rep)
		if err := targetFailure(t, rep, err); err != nil {
			out.Failures = append(out.Failures, err)
		}
	}
	if len(out.Checked) == 0 {
		return out, fmt.Errorf("%s: no cluster of this run is covered by the check (clusters: %s)", c.Name(), titles(targets))
	}
	md, html, err := c.Render(out.Reports)
	if err != nil {
		return out, fmt.Errorf("%s: rendering the report: %w", c.Name(), err)
	}
	if html == "" {
		if html, err = HTMLPage(c.Name(), out.Checked, out.Reports); err != nil {
			return out, err
		}
	}
	out.Markdown = w.Redact(md)
	for _, f := range []struct {
		rel, body string
		path      *string
	}{{c.Name() + ".md", md, &out.MarkdownPath}, {c.Name() + ".html", html, &out.HTMLPath}} {
		if err := w.WriteFile(f.rel, []byte(f.body)); err != nil {
			return out, err
		}
		*f.path, _ = w.Path(f.rel)
	}
	return out, nil
}

// targetFailure turns CheckTarget's error into the target's line in the
// failure list: a failed check is summed up (the report has the details),
// anything else is quoted.
func targetFailure(t Target, rep Report, err error) error {
	if err == nil {
		return nil
	}
	var failed *FailedError
	var errs []error
	if errors.As(err, &failed) {
		if line := failed.CauseLine(); line != "" {
			// The cause first: it is what a one-line report (the SUMMARY
			// table, JUnit's message) must show.
			errs = append(errs, fmt.Errorf("%s; %s", line, rep.Summary()))
		} else {
			errs = append(errs, fmt.Errorf("%s: %s", t.Title(), rep.Summary()))
		}
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if !errors.As(e, &failed) {
				errs = append(errs, fmt.Errorf("%s: %w", t.Title(), e))
			}
		}
	} else if failed == nil {
		errs = append(errs, fmt.Errorf("%s: %w", t.Title(), err))
	}
	return errors.Join(errs...)
}

func titles(targets []Target) string {
	if len(targets) == 0 {
		return "none"
	}
	s := ""
	for i, t := range targets {
		if i > 0 {
			s += ", "
		}
		s += t.Title()
	}
	return s
}
