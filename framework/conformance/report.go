package conformance

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/tkg-e2e/harness/framework/assert"
)

// Status of one conformance test.
type Status string

const (
	Passed  Status = "passed"
	Failed  Status = "failed"
	Skipped Status = "skipped"
)

// Test is one conformance test of the report.
type Test struct {
	Name     string
	Status   Status
	Duration time.Duration
	// Message is the failure text (failed), or Ginkgo's skip message.
	Message string
	// SkipReason says why a skipped test did not run: the test skipped
	// itself (e2eskipper: a provider, a feature, a node count), or the
	// selection of the kubetest config left it out, and why it does.
	SkipReason string
}

// Result is a conformance run on one cluster.
type Result struct {
	Cluster string
	Image   string
	// Config is the kubetest config file; Focus and Skip are its ginkgo.focus
	// and ginkgo.skip.
	Config, Focus, Skip string
	// Tests are the [Conformance] tests of e2e.test, every one of them: run,
	// skipped by the test itself, or left out by the selection.
	Tests    []Test
	Duration time.Duration
	// JUnit are the JUnit files copied into the artifacts (relative paths).
	JUnit []string
	// Err is what went wrong with the run itself (no JUnit, the container
	// failed before the suite started), apart from failed tests.
	Err string
}

// IsConformance reports whether a spec is one of Kubernetes' conformance
// tests: they carry the [Conformance] tag in their text.
func IsConformance(name string) bool { return strings.Contains(name, "[Conformance]") }

// Count returns how many conformance tests have a status.
func (r *Result) Count(s Status) int {
	n := 0
	for _, t := range r.Tests {
		if t.Status == s {
			n++
		}
	}
	return n
}

// Failed reports whether the run fails: a failed test, no test run at all
// (a selection that ran nothing proves nothing), or a run error.
func (r *Result) Failed() bool {
	return r.Err != "" || r.Count(Failed) > 0 || r.Count(Passed) == 0
}

// Summary is one line for progress, SUMMARY.md and index.html.
func (r *Result) Summary() string {
	s := fmt.Sprintf("%d passed, %d failed, %d skipped of %d conformance tests in %s",
		r.Count(Passed), r.Count(Failed), r.Count(Skipped), len(r.Tests), r.Duration.Round(time.Second))
	if r.Err != "" {
		s += "; " + assert.Shorten(assert.OneLine(r.Err), 200)
	}
	return s
}

// Error is the stage's failure, with every failed test named.
func (r *Result) Error() error {
	if !r.Failed() {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "conformance on cluster %s: %s", r.Cluster, r.Summary())
	if r.Count(Passed) == 0 && r.Count(Failed) == 0 && r.Err == "" {
		fmt.Fprintf(&b, "\nno conformance test ran: the selection of %s (focus %q, skip %q) matched none", r.Config, r.Focus, r.Skip)
	}
	for _, t := range r.Tests {
		if t.Status == Failed {
			fmt.Fprintf(&b, "\n- FAILED %s (%s)\n%s", t.Name, t.Duration.Round(time.Second), indent(firstLines(t.Message, 12), "    "))
		}
	}
	return fmt.Errorf("%s", b.String())
}

// Markdown is conformance.md: the counts, the failures with their messages,
// the passed tests, and the skipped ones grouped by reason.
func (r *Result) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Kubernetes conformance: %s\n\n", assert.Passed(r.Failed()))
	fmt.Fprintf(&b, "Cluster **%s**, image `%s`, kubetest config `%s` (focus `%s`, skip `%s`).\n\n",
		r.Cluster, r.Image, r.Config, r.Focus, assert.Or(r.Skip, "none"))
	fmt.Fprintf(&b, "%s.\n\n", r.Summary())
	if r.Err != "" {
		b.WriteString("## The run itself failed\n\n")
		assert.Fenced(&b, r.Err, "")
		b.WriteString("\n")
	}
	if len(r.JUnit) > 0 {
		fmt.Fprintf(&b, "JUnit: %s\n\n", strings.Join(r.JUnit, ", "))
	}
	section := func(title string, s Status, withMessage bool) {
		var rows [][]string
		for _, t := range r.Tests {
			if t.Status == s {
				rows = append(rows, []string{assert.Cell(t.Name), t.Duration.Round(100 * time.Millisecond).String()})
			}
		}
		if len(rows) == 0 {
			return
		}
		fmt.Fprintf(&b, "## %s (%d)\n\n", title, len(rows))
		if withMessage {
			for _, t := range r.Tests {
				if t.Status == s {
					fmt.Fprintf(&b, "### %s\n\n", t.Name)
					assert.Fenced(&b, firstLines(t.Message, 40), "")
					b.WriteString("\n")
				}
			}
			return
		}
		b.WriteString(assert.MarkdownTable([]string{"test", "time"}, rows))
		b.WriteString("\n")
	}
	section("Failed", Failed, true)
	section("Passed", Passed, false)

	byReason := map[string][]string{}
	for _, t := range r.Tests {
		if t.Status == Skipped {
			byReason[t.SkipReason] = append(byReason[t.SkipReason], t.Name)
		}
	}
	if len(byReason) > 0 {
		reasons := make([]string, 0, len(byReason))
		for k := range byReason {
			reasons = append(reasons, k)
		}
		sort.Slice(reasons, func(i, j int) bool { return len(byReason[reasons[i]]) > len(byReason[reasons[j]]) })
		fmt.Fprintf(&b, "## Skipped (%d): not run, never counted as passed\n\n", r.Count(Skipped))
		for _, reason := range reasons {
			fmt.Fprintf(&b, "### %s (%d)\n\n", reason, len(byReason[reason]))
			for _, n := range byReason[reason] {
				fmt.Fprintf(&b, "- %s\n", n)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = append(lines[:n], fmt.Sprintf("... (%d more lines in the JUnit file)", len(lines)-n))
	}
	return strings.Join(lines, "\n")
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}
