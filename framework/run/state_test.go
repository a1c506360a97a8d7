package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func newState(t *testing.T) (string, *State) {
	t.Helper()
	dir := t.TempDir()
	s, err := New(dir, "r1", "local", "config/local.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return dir, s
}

func TestStateRoundTripAndResume(t *testing.T) {
	dir, s := newState(t)
	must(t, s.StartStage("bootstrap"))
	must(t, s.PutResource(Resource{Kind: "kind-cluster", Name: "tkg-kind", Role: "bootstrap", State: "creating", CreatedBy: "bootstrap"}))
	must(t, s.EndStage("bootstrap", StatusPassed, ""))
	must(t, s.SetResourceState("kind-cluster//tkg-kind", "ready"))
	must(t, s.PutResource(Resource{Kind: "capi-cluster", Name: "mgmt", Namespace: "default", Role: "management", State: "creating"}))

	back, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Passed("bootstrap") || back.Passed("management") {
		t.Fatalf("stages wrong: %+v", back.Stages)
	}
	r, ok := back.Resource("kind-cluster", "bootstrap")
	if !ok || r.State != "ready" {
		t.Fatalf("resource lost: %+v", back.Resources)
	}
	live := back.Live()
	if len(live) != 2 || live[0].Name != "mgmt" {
		t.Fatalf("Live() should list newest first: %+v", live)
	}
	if _, err := os.Stat(filepath.Join(dir, StateFile+".tmp")); !os.IsNotExist(err) {
		t.Fatalf("temp file left behind")
	}
}

func TestLoadMissingSaysHowToFix(t *testing.T) {
	_, err := Load(t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "ARTIFACTS=") {
		t.Fatalf("got %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A reused stage reports the re-attach as its duration and keeps the kept
// run's apart.
func TestReuseStageTimesTheReattach(t *testing.T) {
	dir, s := newState(t)
	must(t, s.StartStage("management"))
	s.Stages["management"].Started = s.Stages["management"].Started.Add(-150 * time.Second)
	must(t, s.EndStage("management", StatusPassed, ""))
	kept := s.Stages["management"].Seconds
	if kept < 150 {
		t.Fatalf("setup: kept run took %.1fs", kept)
	}
	back, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	must(t, back.ReuseStage("management"))
	if back.Passed("management") {
		t.Fatal("a stage being re-attached counts as passed")
	}
	must(t, back.EndStage("management", StatusReused, "re-attached"))
	rec, _ := back.Stage("management")
	if rec.Seconds > 5 || rec.KeptSeconds != kept || !back.Passed("management") {
		t.Fatalf("reused stage: seconds %.1f (want the re-attach, < 5), kept %.1f (want %.1f)", rec.Seconds, rec.KeptSeconds, kept)
	}
	for _, tm := range back.Timings() {
		if tm.Stage == "management" && tm.Seconds > 5 {
			t.Fatalf("timings.json reports the kept run's %.1fs for a reused stage", tm.Seconds)
		}
	}
}

// A stage whose own steps passed while its check went on ends when the check
// does; a kept run cut short while the check ran loads it as failed.
func TestPendingStageEndsWithItsCheck(t *testing.T) {
	_, s := newState(t)
	must(t, s.StartStage("move"))
	must(t, s.EndStagePending("move", "the settle-after check"))
	if rec, _ := s.Stage("move"); !s.Passed("move") || rec.Pending != "the settle-after check" {
		t.Fatalf("pending stage: %+v (passed %v)", rec, s.Passed("move"))
	}
	first, _ := s.Stage("move")
	time.Sleep(5 * time.Millisecond)
	must(t, s.EndStage("move", StatusPassed, ""))
	if rec, _ := s.Stage("move"); rec.Pending != "" || rec.Status != StatusPassed || rec.Duration < first.Duration+5*time.Millisecond {
		t.Fatalf("after the check: %+v (its own steps: %s)", rec, first.Duration)
	}

	dir, cut := newState(t)
	must(t, cut.StartStage("move"))
	must(t, cut.EndStagePending("move", "the settle-after check"))
	must(t, cut.Close())
	back, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = back.Close() }()
	if rec, _ := back.Stage("move"); back.Passed("move") || rec.Pending != "" || !strings.Contains(rec.Message, "settle-after check was still running") {
		t.Fatalf("a kept run cut short during the check loads as %+v", rec)
	}
}
