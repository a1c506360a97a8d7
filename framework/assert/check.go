package assert

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/redact"
	"github.com/tkg-e2e/harness/framework/wait"
)

// Target is one cluster of the run to check.
type Target struct {
	// Role is a Roles entry; targets of other roles (bootstrap) are not checked.
	Role string
	// Name and Namespace are the Cluster API cluster's (placeholders in
	// package lists expand to them).
	Name, Namespace string
	// Cluster reaches it (kube.Connect). Its Client must know the
	// kapp-controller types, which kube.Scheme has.
	Cluster *kube.Cluster
}

// Title names the target in headings and messages: workload cluster "wl".
func (t Target) Title() string {
	if t.Name == "" {
		return t.Role + " cluster"
	}
	return fmt.Sprintf("%s cluster %q", t.Role, t.Name)
}

// Options are how long and how a check waits, and where it tells about it.
type Options struct {
	// Timeout bounds how long each target may take to settle (from the
	// config intervals). Required.
	Timeout time.Duration
	// Interval between polls; zero lets wait.For choose.
	Interval time.Duration
	// Grace is how long a report may stay stuck (StuckCause of its rows)
	// before the check ends with that cause; 0 is wait.DefaultGrace.
	Grace time.Duration
	// Progress receives the wait's progress lines; nil is silent.
	Progress io.Writer
	// Prefix starts every progress line; it defaults to "[<check name>]".
	Prefix string
	// Redactor masks secrets in what a check quotes from a cluster (pod logs,
	// kapp-controller messages) before it enters a report or an error. Nil
	// still masks secret shapes (keys, tokens).
	Redactor *redact.Redactor
	// Targets are all clusters of the run, for a check that reads one cluster
	// on behalf of another (a workload cluster's kapp-controller
	// PackageInstall lives on the management cluster). Run sets it.
	Targets []Target
}

// Target returns the target of a role among Options.Targets, or nil.
func (o Options) Target(role string) *Target {
	for i := range o.Targets {
		if o.Targets[i].Role == role && o.Targets[i].Cluster != nil {
			return &o.Targets[i]
		}
	}
	return nil
}

func (o Options) withDefaults(c Check) Options {
	if o.Prefix == "" {
		o.Prefix = "[" + c.Name() + "]"
	}
	if o.Redactor == nil {
		o.Redactor = redact.New()
	}
	return o
}

// Check is one kind of assertion over clusters: placement, packages and
// health are the three. Keeping it small is the point: a new kind of check is a file that
// loads its input and implements these methods; the loop, the waiting, the
// failure message and the artifacts come from Run.
type Check interface {
	// Name names the check in progress lines, errors and files (<name>.md).
	Name() string
	// Plan prepares the check of one target. A nil Probe and nil error mean
	// the target is not this check's concern (the matrix has no column for
	// its role); an error means the check cannot run (bad input). opts come
	// with their defaults applied (Prefix, Redactor are set) and the target
	// has a Client.
	Plan(t Target, opts Options) (Probe, error)
	// Render renders the last reports of every checked target, in target
	// order: Markdown always, and an HTML page or "" to let Run render the
	// rows as a generic page.
	Render(reports []Report) (markdown, html string, err error)
}

// Probe checks one target.
type Probe interface {
	// What is waited for, for the progress lines and the timeout error.
	What() string
	// Observe reads the target once and judges it, without waiting. An error
	// is transient (retried until the deadline) unless wrapped with
	// wait.Permanent.
	Observe(ctx context.Context) (Report, error)
	// Finish runs once after the wait with the last report: settled says
	// whether it passed. It adds what is only worth fetching for the final
	// report (logs of failing pods) and runs checks that depend on the
	// settled state (the ClusterBootstrap mirror); an error fails the target
	// without stopping the others.
	Finish(ctx context.Context, last Report, settled bool) error
}

// Closer is a Probe that makes something on the cluster (a scratch
// namespace) which its Finish removes: when the wait ends without Finish (an
// interrupt), CheckTarget calls Close instead, with a context of its own.
type Closer interface {
	Close(ctx context.Context) error
}

// closeTimeout bounds a Close after an interrupt: the run is ending, and a
// deletion the API server accepted completes without the harness.
const closeTimeout = 30 * time.Second

// Report is one target's evaluation.
type Report interface {
	// Rows are the check's rows in the shared shape, in file order.
	Rows() []Row
	// Failed reports whether the target fails the check.
	Failed() bool
	// Summary is one line, for progress lines and failure lists.
	Summary() string
	// Failure is the message of a target that still fails at the deadline:
	// a headline and everything a reader needs, so one message shows all.
	Failure(waited time.Duration) string
}

// FailedError is returned for a target that still fails at the deadline,
// or whose failure could not fix itself (Cause).
type FailedError struct {
	Check  string
	Target Target
	// Report is the last evaluation, with what Finish added.
	Report Report
	Waited time.Duration
	// Cause is set when the wait ended early on a stuck state: what
	// refused, in the API's or controller's words. It leads the message.
	Cause string
}

func (e *FailedError) Error() string {
	if e.Cause == "" {
		return e.Report.Failure(e.Waited)
	}
	return e.CauseLine() + "\n" + e.Report.Failure(e.Waited)
}

// CauseLine is the first line of a failure that ended on its cause: the
// cause, then the cluster and how long the check waited. "" without Cause.
func (e *FailedError) CauseLine() string {
	if e.Cause == "" {
		return ""
	}
	return fmt.Sprintf("%s (%s; gave up after %s: it cannot fix itself)", e.Cause, e.Target.Title(), e.Waited.Round(time.Second))
}

// ErrNotApplicable is wrapped by CheckTarget's error for a target the check
// does not cover.
var ErrNotApplicable = errors.New("the check does not apply to this cluster")

// CheckTarget waits until one target passes the check or the timeout passes,
// and returns its last report in both cases. A target that still fails at
// the deadline gives a *FailedError (joined with Finish's error, if any).
func CheckTarget(ctx context.Context, c Check, t Target, opts Options) (Report, error) {
	switch {
	case c == nil:
		return nil, errors.New("assert.CheckTarget: no check given")
	case t.Cluster == nil || t.Cluster.Client == nil:
		return nil, fmt.Errorf("%s check of the %s: no client (build the target with kube.Connect)", c.Name(), t.Title())
	case opts.Timeout <= 0:
		return nil, fmt.Errorf("%s check of the %s: Timeout must be > 0 (take it from the config intervals)", c.Name(), t.Title())
	}
	opts = opts.withDefaults(c)
	probe, err := c.Plan(t, opts)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s check of the %s: %w", c.Name(), t.Title(), err)
	case probe == nil:
		return nil, fmt.Errorf("%s check of the %s: %w", c.Name(), t.Title(), ErrNotApplicable)
	}
	var last Report
	start := time.Now()
	err = wait.For(ctx, wait.Options{What: probe.What(), Timeout: opts.Timeout, Interval: opts.Interval,
		Progress: opts.Progress, Prefix: opts.Prefix, Grace: opts.Grace},
		func(ctx context.Context) (bool, string, error) {
			r, err := probe.Observe(ctx)
			if ctx.Err() != nil && last != nil {
				// The wait's own deadline (or an interrupt) cut this reading
				// short: its rows would say "context deadline exceeded", not
				// what the cluster holds. The reading before it is the last word.
				return false, last.Summary(), ctx.Err()
			}
			if err != nil {
				return false, "", err
			}
			last = r
			if !r.Failed() {
				return true, r.Summary(), nil
			}
			if cause := StuckCause(r.Rows()); cause != "" {
				return false, r.Summary(), wait.Stuck(cause)
			}
			return false, r.Summary(), nil
		})
	var timeout *wait.TimeoutError
	var stuck *wait.StuckError
	switch {
	case last == nil && err != nil:
		return nil, fmt.Errorf("%s check of the %s: could not read it: %w", c.Name(), t.Title(), err)
	case err != nil && !errors.As(err, &timeout) && !errors.As(err, &stuck):
		// Interrupted (or a permanent error): no Finish, but what the probe
		// made on the cluster must go all the same.
		if cl, ok := probe.(Closer); ok {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
			defer cancel()
			err = errors.Join(err, cl.Close(cctx))
		}
		return last, err
	}
	finishErr := probe.Finish(ctx, last, err == nil)
	if err == nil {
		return last, finishErr
	}
	failed := &FailedError{Check: c.Name(), Target: t, Report: last, Waited: time.Since(start)}
	if stuck != nil {
		failed.Cause = stuck.Cause
	}
	return last, errors.Join(failed, finishErr)
}
