// Package cleanup deletes what a run created, driven by the run state
// (framework/run), newest first, and then asks every leak check whether
// anything of the run is left. It knows no resource kind itself: the
// packages that create resources provide the Deleter and the LeakCheck for
// them (kind.Deleter, clusters.Deleter, node.LeakCheck, kind.LeakCheck), and
// the caller passes the set its stages use, so a new kind of resource needs
// no change here and an unknown one is reported, never silently kept.
package cleanup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/framework/wait"
)

// Deleter deletes one recorded resource; how says what it did ("kind
// delete", "through its management cluster"). A resource that is already
// gone is not an error.
type Deleter func(ctx context.Context, r run.Resource) (how string, err error)

// LeakCheck lists what of the run is still there; checked says what was
// looked at.
type LeakCheck func(ctx context.Context, s *run.State) (leaks []string, checked string, err error)

// Input is the input of Run and All.
type Input struct {
	State *run.State
	// Deleters by run.Resource.Kind.
	Deleters map[string]Deleter
	// LeakChecks run by All after the deletions.
	LeakChecks []LeakCheck
	Progress   io.Writer
	Prefix     string
}

// Report says what Run did with each resource.
type Report struct {
	// Deleted resources with how ("capi-cluster/ns/wl: through its management cluster in 25s").
	Deleted []string
	// Failed resources with the error and the hint to delete them by hand.
	Failed []string
	// Skipped resources no Deleter was given for, with their hint.
	Skipped []string
	// Kept resources whose Deleter keeps them on purpose (templates the next
	// run reuses), with why.
	Kept []string
}

// keptError is what Keep returns.
type keptError struct{ reason string }

func (k keptError) Error() string { return "kept: " + k.reason }

// Keep is what a Deleter returns for a resource it leaves on purpose (an
// imported template that the next nightly reuses): Run reports it as kept,
// not deleted and not failed, and it stays live in the state.
func Keep(reason string) error { return keptError{reason} }

func (r *Report) String() string {
	s := fmt.Sprintf("deleted %d", len(r.Deleted))
	if len(r.Failed) > 0 {
		s += fmt.Sprintf(", FAILED %d: %s", len(r.Failed), strings.Join(r.Failed, "; "))
	}
	if len(r.Skipped) > 0 {
		s += fmt.Sprintf(", skipped %d: %s", len(r.Skipped), strings.Join(r.Skipped, "; "))
	}
	if len(r.Kept) > 0 {
		s += fmt.Sprintf(", kept %d on purpose: %s", len(r.Kept), strings.Join(r.Kept, "; "))
	}
	return s
}

// Run deletes every live resource of the run state in reverse creation order
// with the Deleter of its kind and marks it deleted. It goes on after a
// failure; the error lists every failure with its DeleteHint. A resource
// whose kind has no Deleter is Skipped with its DeleteHint.
func Run(ctx context.Context, in Input) (*Report, error) {
	if in.State == nil {
		return nil, errors.New("cleanup.Run: invalid input: State is nil")
	}
	ctx = WithRun(ctx, in.State)
	p := wait.Printer{W: in.Progress, Prefix: in.Prefix}
	rep := &Report{}
	for _, r := range in.State.Live() {
		if err := ctx.Err(); err != nil {
			rep.Failed = append(rep.Failed, fmt.Sprintf("%s: not deleted, interrupted (by hand: %s)", r.Key(), r.DeleteHint))
			continue
		}
		del := in.Deleters[r.Kind]
		if del == nil {
			rep.Skipped = append(rep.Skipped, fmt.Sprintf("%s: no deleter for kind %q (by hand: %s)", r.Key(), r.Kind, r.DeleteHint))
			continue
		}
		start := time.Now()
		how, err := del(ctx, r)
		var kept keptError
		if errors.As(err, &kept) {
			rep.Kept = append(rep.Kept, fmt.Sprintf("%s: %s", r.Key(), kept.reason))
			continue
		}
		if err == nil {
			err = in.State.SetResourceState(r.Key(), "deleted")
		}
		if err != nil {
			rep.Failed = append(rep.Failed, fmt.Sprintf("%s: %v (by hand: %s)", r.Key(), err, r.DeleteHint))
			p.Printf("cleanup: %s FAILED: %v", r.Key(), err)
			continue
		}
		line := fmt.Sprintf("%s: %s in %s", r.Key(), how, time.Since(start).Round(100*time.Millisecond))
		rep.Deleted = append(rep.Deleted, line)
		p.Printf("cleanup: %s", line)
	}
	if len(rep.Failed) > 0 {
		return rep, fmt.Errorf("cleanup: %d resource(s) not deleted: %s", len(rep.Failed), strings.Join(rep.Failed, "; "))
	}
	return rep, nil
}

type runKey struct{}

type runOf struct {
	state *run.State
	until time.Time
}

// WithRun returns a context that tells the deleters and leak checks which
// run they act for (RunOf). Run and All call it; a context that already
// carries a run keeps it.
func WithRun(ctx context.Context, s *run.State) context.Context {
	if st, _ := RunOf(ctx); st != nil || s == nil {
		return ctx
	}
	return context.WithValue(ctx, runKey{}, runOf{state: s, until: s.Updated})
}

// RunOf is the run a deleter or leak check acts for, and when it last
// worked: the state file's last write before cleanup changed anything (a
// kept run's end; for a run cleaning up after itself, a moment ago).
// Containers kind or CAPD created for the run were created before then.
func RunOf(ctx context.Context) (*run.State, time.Time) {
	r, ok := ctx.Value(runKey{}).(runOf)
	if !ok {
		return nil, time.Time{}
	}
	return r.state, r.until
}
