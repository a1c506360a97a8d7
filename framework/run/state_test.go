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
