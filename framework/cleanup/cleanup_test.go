package cleanup

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tkg-e2e/harness/framework/run"
)

func newState(t *testing.T, rs ...run.Resource) *run.State {
	t.Helper()
	st, err := run.New(t.TempDir(), "r", "local", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if err := st.PutResource(r); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

func TestRunSkipsUnknownKindsWithTheirHint(t *testing.T) {
	st := newState(t, run.Resource{Kind: "vsphere-template", Name: "t", State: "ready", DeleteHint: "govc vm.destroy t"},
		run.Resource{Kind: "kind-cluster", Name: "gone", State: "deleted"})
	rep, err := Run(t.Context(), Input{State: st, Deleters: map[string]Deleter{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Skipped) != 1 || !strings.Contains(rep.Skipped[0], "govc vm.destroy t") || len(rep.Deleted) != 0 {
		t.Fatalf("%+v", rep)
	}
}

func TestRunDeletesNewestFirstAndMarksDeleted(t *testing.T) {
	st := newState(t, run.Resource{Kind: "a", Name: "first", State: "ready"}, run.Resource{Kind: "b", Name: "second", State: "ready"},
		run.Resource{Kind: "a", Name: "broken", State: "ready", DeleteHint: "rm broken"})
	var order []string
	del := func(ctx context.Context, r run.Resource) (string, error) {
		order = append(order, r.Name)
		if r.Name == "broken" {
			return "", errors.New("boom")
		}
		return "gone", nil
	}
	rep, err := Run(t.Context(), Input{State: st, Deleters: map[string]Deleter{"a": del, "b": del}})
	if err == nil || !strings.Contains(err.Error(), "boom (by hand: rm broken)") {
		t.Fatalf("error %v", err)
	}
	if strings.Join(order, ",") != "broken,second,first" || len(rep.Deleted) != 2 || len(rep.Failed) != 1 {
		t.Fatalf("order %v, report %+v", order, rep)
	}
	if r, _ := st.Resource("b", "second"); r.State != "deleted" || r.Deleted == nil || r.Deleted.How != "gone" {
		t.Fatalf("second not marked deleted with how (the state is what CI reads): %+v", r)
	}
	if r, _ := st.Resource("a", "broken"); r.State == "deleted" || r.Deleted != nil {
		t.Fatalf("broken marked deleted: %+v", r)
	}
}

func TestRunReportsKeptResourcesApart(t *testing.T) {
	st := newState(t, run.Resource{Kind: "vsphere-template", Name: "t", State: "ready", DeleteHint: "govc vm.destroy t"})
	keep := func(context.Context, run.Resource) (string, error) { return "", Keep("the next run reuses it") }
	rep, err := Run(t.Context(), Input{State: st, Deleters: map[string]Deleter{"vsphere-template": keep}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Kept) != 1 || len(rep.Deleted)+len(rep.Failed) != 0 || !strings.Contains(rep.String(), "kept 1 on purpose") {
		t.Fatalf("%+v", rep)
	}
	if len(st.Live()) != 1 {
		t.Fatalf("a kept resource was marked deleted: %+v", st.Resources)
	}
}

func TestAllRecordsNothingLeftOnlyWhenEveryCheckAgrees(t *testing.T) {
	clean := func(ctx context.Context, s *run.State) ([]string, string, error) { return nil, "x", nil }
	leaky := func(ctx context.Context, s *run.State) ([]string, string, error) {
		return []string{"container h4e-mgmt-lb (Up 3 minutes)"}, "y", nil
	}
	broken := func(ctx context.Context, s *run.State) ([]string, string, error) {
		return nil, "", errors.New("no docker")
	}
	for name, tc := range map[string]struct {
		checks []LeakCheck
		want   string
	}{
		"clean":  {[]LeakCheck{clean, clean}, "done: nothing left"},
		"leak":   {[]LeakCheck{clean, leaky}, "failed: left behind after cleanup: container h4e-mgmt-lb (Up 3 minutes) (x; y)"},
		"broken": {[]LeakCheck{clean, broken}, "failed: leak check: no docker"},
		"none":   {nil, "done: no leak check configured"},
	} {
		st := newState(t)
		err := All(t.Context(), Input{State: st, LeakChecks: tc.checks})
		if (err == nil) != strings.HasPrefix(tc.want, "done") || st.Cleanup != tc.want {
			t.Errorf("%s: err %v, outcome %q, want %q", name, err, st.Cleanup, tc.want)
		}
	}
}

func TestRunDeletesConsecutiveIndependentResourcesTogetherAndTheRestByThemselves(t *testing.T) {
	// Newest first: wl and mgmt delete alone, template does not, kind alone again.
	st := newState(t, run.Resource{Kind: "kind", Name: "kind", State: "ready"},
		run.Resource{Kind: "template", Name: "template", State: "ready"},
		run.Resource{Kind: "cluster", Name: "mgmt", State: "ready"}, run.Resource{Kind: "cluster", Name: "wl", State: "ready"})
	var mu sync.Mutex
	var events []string
	note := func(e string) { mu.Lock(); events = append(events, e); mu.Unlock() }
	inFlight := make(chan struct{}, 2)
	together := func(ctx context.Context, r run.Resource) (string, error) {
		note("start " + r.Name)
		inFlight <- struct{}{}
		// Each waits until the other has started: one at a time would time out.
		deadline := time.After(5 * time.Second)
		for len(inFlight) < 2 {
			select {
			case <-deadline:
				return "", errors.New("ran alone")
			case <-time.After(time.Millisecond):
			}
		}
		note("end " + r.Name)
		return "removed", nil
	}
	byItself := func(ctx context.Context, r run.Resource) (string, error) {
		note("alone " + r.Name)
		return "deleted", nil
	}
	rep, err := Run(t.Context(), Input{State: st,
		Deleters:    map[string]Deleter{"cluster": together, "template": byItself, "kind": byItself},
		Independent: func(r run.Resource) bool { return r.Kind != "template" }})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(events, ",")
	// wl and mgmt in either order, both ended before the template; the kind cluster after it.
	if !strings.HasSuffix(got, "alone template,alone kind") || strings.Count(got[:strings.Index(got, "alone")], "end ") != 2 {
		t.Fatalf("events %s", got)
	}
	var order []string
	for _, d := range rep.Deleted {
		order = append(order, strings.SplitN(d, ":", 2)[0])
	}
	if strings.Join(order, ",") != "cluster//wl,cluster//mgmt,template//template,kind//kind" {
		t.Fatalf("report not in Run's order: %v", rep.Deleted)
	}
	for _, name := range []string{"wl", "mgmt", "template", "kind"} {
		kind := map[string]string{"wl": "cluster", "mgmt": "cluster", "template": "template", "kind": "kind"}[name]
		if r, _ := st.Resource(kind, name); r.State != "deleted" {
			t.Errorf("%s not marked deleted: %+v", name, r)
		}
	}
}

func TestRunPreparesBeforeTheFirstDeletionAndReleasesAfterTheLast(t *testing.T) {
	st := newState(t, run.Resource{Kind: "a", Name: "mgmt", State: "ready"}, run.Resource{Kind: "a", Name: "wl", State: "ready"},
		run.Resource{Kind: "a", Name: "gone", State: "deleted"})
	var events []string
	del := func(ctx context.Context, r run.Resource) (string, error) {
		events = append(events, "delete "+r.Name)
		return "gone", nil
	}
	prepare := func(ctx context.Context, live []run.Resource) (func(), []string) {
		var names []string
		for _, r := range live {
			names = append(names, r.Name)
		}
		events = append(events, "prepare "+strings.Join(names, ","))
		return func() { events = append(events, "release") }, nil
	}
	if _, err := Run(t.Context(), Input{State: st, Deleters: map[string]Deleter{"a": del}, Prepare: prepare}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(events, "; "); got != "prepare wl,mgmt; delete wl; delete mgmt; release" {
		t.Fatalf("events: %s", got)
	}
	// A prepare with nothing to release, and an interrupted run: release still comes last.
	events = nil
	st = newState(t, run.Resource{Kind: "a", Name: "x", State: "ready"})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := Run(ctx, Input{State: st, Deleters: map[string]Deleter{"a": del}, Prepare: prepare})
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("want the interruption reported, got %v", err)
	}
	if got := strings.Join(events, "; "); got != "prepare x; release" {
		t.Fatalf("events after an interruption: %s", got)
	}

	// What the preparation made before cleanup (a throw-away kind cluster a
	// stage started early, newest in the state) is left to its release,
	// which the deletion before it still needs: Run neither deletes it
	// first nor reports it, and the rest goes in Run's order.
	events = nil
	st = newState(t, run.Resource{Kind: "kind", Name: "boot", State: "ready"}, run.Resource{Kind: "a", Name: "mgmt", State: "ready"},
		run.Resource{Kind: "kind", Name: "teardown", State: "ready"})
	teardown := run.Resource{Kind: "kind", Name: "teardown"}.Key()
	owns := func(ctx context.Context, live []run.Resource) (func(), []string) {
		return func() {
			events = append(events, "release")
			_ = st.MarkDeleted(teardown, "released", time.Second)
		}, []string{teardown}
	}
	rep, err := Run(t.Context(), Input{State: st, Deleters: map[string]Deleter{"a": del, "kind": del}, Prepare: owns,
		Independent: func(r run.Resource) bool { return r.Kind == "kind" }})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(events, "; "); got != "delete mgmt; delete boot; release" {
		t.Fatalf("events with an owned resource: %s", got)
	}
	if len(rep.Deleted) != 2 || strings.Contains(strings.Join(rep.Deleted, ";"), "teardown") {
		t.Errorf("report lists %v, want mgmt and boot only", rep.Deleted)
	}
	if r, _ := st.Resource("kind", "teardown"); r.State != "deleted" {
		t.Errorf("teardown not deleted by the release: %+v", r)
	}
}

// Two workload clusters deleted through the same management cluster are
// deleted at the same time (Together); the management cluster, which is
// not Together with them, waits for both.
func TestRunDeletesATogetherGroupAtOnceAndWhatFollowsAfterIt(t *testing.T) {
	// Newest first: wl2, wl, then mgmt.
	st := newState(t, run.Resource{Kind: "cluster", Name: "mgmt", State: "ready"},
		run.Resource{Kind: "cluster", Name: "wl", State: "ready"}, run.Resource{Kind: "cluster", Name: "wl2", State: "ready"})
	var mu sync.Mutex
	var events []string
	note := func(e string) { mu.Lock(); events = append(events, e); mu.Unlock() }
	inFlight := make(chan struct{}, 2)
	del := func(ctx context.Context, r run.Resource) (string, error) {
		if r.Name == "mgmt" {
			note("mgmt")
			return "moved back", nil
		}
		inFlight <- struct{}{}
		deadline := time.After(5 * time.Second)
		for len(inFlight) < 2 { // one at a time would never see the other
			select {
			case <-deadline:
				return "", errors.New("deleted alone")
			case <-time.After(time.Millisecond):
			}
		}
		note("end " + r.Name)
		return "deleted through its management cluster", nil
	}
	_, err := Run(t.Context(), Input{State: st, Deleters: map[string]Deleter{"cluster": del},
		Together: func(a, b run.Resource) bool { return a.Name != "mgmt" && b.Name != "mgmt" }})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(events, ","); !strings.HasSuffix(got, ",mgmt") || strings.Count(got, "end wl") != 2 {
		t.Fatalf("events %s: want both workload clusters ended, then mgmt", got)
	}
}
