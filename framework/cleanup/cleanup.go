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
	"slices"
	"strings"
	"sync"
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
	// Independent, if set, says of a resource whether its Deleter touches nothing
	// of the run but that resource (its own containers, removed by ID; a
	// kind cluster): such deletions that come one after another in Run's
	// order run at the same time, because each takes seconds of Docker
	// work and needs nothing the others remove. Any other deletion (through
	// a management cluster, a move back, a vCenter template a clone may
	// still use) waits for those before it and runs by itself. Nil deletes
	// one at a time.
	Independent func(r run.Resource) bool
	// Together, if set, says whether two resources that come one after the
	// other in Run's order, neither Independent, may be deleted at the same
	// time: two workload clusters deleted through the same management
	// cluster each touch only their own Cluster object. Such a group waits
	// for what came before it, and what comes after waits for the group.
	// Nil deletes them one at a time.
	Together func(a, b run.Resource) bool
	// Prepare, if set, is called with the live resources before the first
	// deletion, to start in the background what a later deletion needs
	// (the throw-away kind cluster a self-hosted management cluster is
	// moved back into, created while the workload cluster is deleted). The
	// func it returns is called after the last deletion, also on failure or
	// interruption, to remove what was prepared and not used; it may be nil.
	// owned lists (by Key) the live resources the preparation made before
	// cleanup started (the throw-away kind cluster a stage started early):
	// release deletes them once the deletion that needs them is done, so
	// Run leaves them out of its order.
	Prepare  func(ctx context.Context, live []run.Resource) (release func(), owned []string)
	Progress io.Writer
	Prefix   string
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
// with the Deleter of its kind and marks it deleted; consecutive resources
// that Input.Independent says delete independently are deleted at the same time. It goes
// on after a failure; the error lists every failure with its DeleteHint. A
// resource whose kind has no Deleter is Skipped with its DeleteHint. The
// report lists resources in Run's order, whatever order they ended in.
func Run(ctx context.Context, in Input) (*Report, error) {
	if in.State == nil {
		return nil, errors.New("cleanup.Run: invalid input: State is nil")
	}
	ctx = WithRun(ctx, in.State)
	p := wait.Printer{W: in.Progress, Prefix: in.Prefix}
	live := in.State.Live()
	if in.Prepare != nil {
		release, owned := in.Prepare(ctx, live)
		if release != nil {
			defer release()
		}
		live = slices.DeleteFunc(live, func(r run.Resource) bool { return slices.Contains(owned, r.Key()) })
	}
	outcomes := make([]outcome, len(live))
	grouped := make([]bool, len(live))
	var beside sync.WaitGroup
	for i, r := range live {
		if grouped[i] {
			continue // deleted with the group it joined
		}
		if err := ctx.Err(); err != nil {
			outcomes[i] = outcome{failed: fmt.Sprintf("%s: not deleted, interrupted (by hand: %s)", r.Key(), r.DeleteHint)}
			continue
		}
		del := in.Deleters[r.Kind]
		if del == nil {
			outcomes[i] = outcome{skipped: fmt.Sprintf("%s: no deleter for kind %q (by hand: %s)", r.Key(), r.Kind, r.DeleteHint)}
			continue
		}
		if in.Independent != nil && in.Independent(r) {
			beside.Go(func() { outcomes[i] = deleteOne(ctx, in.State, p, del, r) })
			continue
		}
		beside.Wait()
		var group sync.WaitGroup
		group.Go(func() { outcomes[i] = deleteOne(ctx, in.State, p, del, r) })
		for j := i + 1; j < len(live) && in.Deleters[live[j].Kind] != nil && in.together(r, live[j]); j++ {
			grouped[j] = true
			group.Go(func() { outcomes[j] = deleteOne(ctx, in.State, p, in.Deleters[live[j].Kind], live[j]) })
		}
		group.Wait()
	}
	beside.Wait()
	rep := &Report{}
	for _, o := range outcomes {
		switch {
		case o.deleted != "":
			rep.Deleted = append(rep.Deleted, o.deleted)
		case o.failed != "":
			rep.Failed = append(rep.Failed, o.failed)
		case o.skipped != "":
			rep.Skipped = append(rep.Skipped, o.skipped)
		case o.kept != "":
			rep.Kept = append(rep.Kept, o.kept)
		}
	}
	if len(rep.Failed) > 0 {
		return rep, fmt.Errorf("cleanup: %d resource(s) not deleted: %s", len(rep.Failed), strings.Join(rep.Failed, "; "))
	}
	return rep, nil
}

// together reports whether b joins the group of a, which Run starts only
// with a resource that is not Independent (Input.Together): an Independent
// b is deleted beside others instead.
func (in Input) together(a, b run.Resource) bool {
	if in.Together == nil || (in.Independent != nil && in.Independent(b)) {
		return false
	}
	return in.Together(a, b)
}

// outcome is what happened to one resource: exactly one field is set.
type outcome struct{ deleted, failed, skipped, kept string }

// deleteOne deletes r with del and marks it deleted in the state.
func deleteOne(ctx context.Context, s *run.State, p wait.Printer, del Deleter, r run.Resource) outcome {
	start := time.Now()
	how, err := del(ctx, r)
	var kept keptError
	if errors.As(err, &kept) {
		return outcome{kept: fmt.Sprintf("%s: %s", r.Key(), kept.reason)}
	}
	took := time.Since(start)
	if err == nil {
		err = s.MarkDeleted(r.Key(), how, took)
	}
	if err != nil {
		p.Printf("cleanup: %s FAILED: %v", r.Key(), err)
		return outcome{failed: fmt.Sprintf("%s: %v (by hand: %s)", r.Key(), err, r.DeleteHint)}
	}
	line := fmt.Sprintf("%s: %s in %s", r.Key(), how, took.Round(100*time.Millisecond))
	p.Printf("cleanup: %s", line)
	return outcome{deleted: line}
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
