// Package tailsuite_test runs stages that leave checks running beside the
// stages after them in a real Ginkgo suite (its own binary: Ginkgo runs one
// suite per process), built the way e2e/ builds the lifecycle suite.
package tailsuite_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	. "github.com/onsi/gomega"

	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/framework/stages"
	"github.com/tkg-e2e/harness/suites"
	"github.com/tkg-e2e/harness/suites/lifecycle"
)

// tailStage passes its own steps at once and leaves a check that, once the
// stage after it started (beside), adds a report entry and says so on added,
// and ends, with err, when release is closed.
func tailStage(name, joinAfter string, beside <-chan struct{}, added chan<- string, release <-chan struct{}, err error) suites.Stage {
	return suites.Stage{
		Definition: stages.Definition{Name: name, Category: stages.Harness, Doc: "test stage with a tail"},
		JoinAfter:  joinAfter,
		Spec: func(_ context.Context, env func() *suites.Env) {
			It("passes and leaves a check running", func(ctx SpecContext) {
				e := env()
				suites.RunStage(ctx, e, name, suites.StageFuncs{Run: func(context.Context) error {
					e.StartTail(name, "the "+name+" check", func(ctx context.Context) (suites.TailResult, error) {
						select {
						case <-beside:
						case <-ctx.Done():
							return suites.TailResult{}, ctx.Err()
						}
						suites.AddEntry(ctx, name+" entry", "from "+name+"'s tail")
						added <- name
						select {
						case <-release:
						case <-ctx.Done():
							return suites.TailResult{}, ctx.Err()
						}
						return suites.TailResult{Steps: []suites.Step{{Name: name + "-check", Duration: time.Millisecond}}}, err
					})
					return nil
				}})
			})
		},
	}
}

// TestTailsAreTheirStagesOwn: a stage after two tailed stages runs while
// their checks do (they are passed, pending); each check's end is its
// stage's end; the failed one fails its own stage's join spec, not the
// stage that ran beside it; a report entry a check adds while the stage
// beside it runs is in its own join spec, not in the spec running then.
func TestTailsAreTheirStagesOwn(t *testing.T) {
	release, beside, added := make(chan struct{}), make(chan struct{}), make(chan string, 2)
	var during map[string]run.StageRecord
	after := suites.Stage{
		Definition: stages.Definition{Name: "after", Needs: []string{"good", "bad"}, Category: stages.Harness, Doc: "runs beside the tails"},
		Spec: func(_ context.Context, env func() *suites.Env) {
			It("runs while the tails do", func(ctx SpecContext) {
				e := env()
				suites.RunStage(ctx, e, "after", suites.StageFuncs{Run: func(context.Context) error {
					during = map[string]run.StageRecord{}
					for _, s := range []string{"good", "bad"} {
						during[s], _ = e.State.Stage(s)
					}
					close(beside)
					for range 2 {
						<-added
					}
					time.Sleep(300 * time.Millisecond)
					close(release)
					return nil
				}})
			})
		},
	}
	reg, err := suites.NewRegistry(suites.TeardownScopes,
		tailStage("good", "after", beside, added, release, nil),
		tailStage("bad", "after", beside, added, release, errors.New("boom: the check saw a change")), after)
	if err != nil {
		t.Fatal(err)
	}
	var env *suites.Env
	var failed []types.SpecReport
	entriesIn := map[string][]string{} // an entry's name -> the specs that have it
	BeforeSuite(func() {
		var err error
		env, err = suites.NewEnv(suites.EnvOptions{Registry: lifecycle.Registry, ConfigPath: "../../config/local.yaml",
			ArtifactFolder: filepath.Join(t.TempDir(), "run"), Out: GinkgoWriter})
		Expect(err).NotTo(HaveOccurred())
		env.Registry = reg
	})
	AfterSuite(func(ctx SpecContext) { suites.SuiteTeardown(ctx, env) })
	ReportAfterSuite("failed specs", func(r Report) {
		for _, s := range r.SpecReports {
			for _, e := range s.ReportEntries {
				if strings.HasSuffix(e.Name, " entry") {
					entriesIn[e.Name] = append(entriesIn[e.Name], strings.Join(append(s.ContainerHierarchyTexts[1:], s.LeafNodeText), " / "))
				}
			}
			if s.LeafNodeType == types.NodeTypeIt && s.Failed() {
				failed = append(failed, s)
			}
		}
	})
	envOf := func() *suites.Env { return env }
	Describe("tails", Ordered, ContinueOnFailure, func() {
		for _, s := range reg.Stages() {
			Context(s.Name, Label(reg.Labels(s.Name)...), func() { s.Spec(context.Background(), envOf) })
			for _, j := range reg.JoinsAfter(s.Name) {
				Context(j.Name, Label(reg.Labels(j.Name)...), func() { suites.JoinSpec(j.Name, envOf) })
			}
		}
	})
	RegisterFailHandler(Fail)
	// The suite must fail (the bad check); t fails only on what is checked below.
	if RunSpecs(&suiteFailed{}, "tails") {
		t.Fatal("the suite passed, but the bad stage's check failed")
	}

	for _, s := range []string{"good", "bad"} {
		if d := during[s]; d.Status != run.StatusPassed || d.Pending != "the "+s+" check" {
			t.Errorf("while the stage after ran, %s was %+v; want passed with its check pending", s, d)
		}
	}
	good, _ := env.State.Stage("good")
	bad, _ := env.State.Stage("bad")
	aft, _ := env.State.Stage("after")
	if good.Status != run.StatusPassed || good.Pending != "" || good.Message != "" {
		t.Errorf("good: %+v", good)
	}
	if bad.Status != run.StatusFailed || !strings.Contains(bad.Message, "boom") || bad.Pending != "" {
		t.Errorf("bad: %+v", bad)
	}
	if aft.Status != run.StatusPassed {
		t.Errorf("after: %+v", aft)
	}
	// A stage ends when its check does: after the stage that ran beside it started, and lasting past its sleep.
	for name, rec := range map[string]run.StageRecord{"good": good, "bad": bad} {
		if end := rec.Started.Add(rec.Duration); end.Before(aft.Started.Add(300*time.Millisecond)) || rec.Seconds < 0.3 {
			t.Errorf("%s ended %s, %.3fs after it started; the stage beside it started %s", name, end, rec.Seconds, aft.Started)
		}
	}
	for _, s := range []string{"good", "bad"} {
		want := s + " / finishes the checks it left running beside the stages after it"
		if got := entriesIn[s+" entry"]; len(got) != 1 || got[0] != want {
			t.Errorf("%s's tail's entry is in %q; want only in %q", s, got, want)
		}
	}
	if len(failed) != 1 || failed[0].ContainerHierarchyTexts[len(failed[0].ContainerHierarchyTexts)-1] != "bad" ||
		!strings.Contains(failed[0].FailureMessage(), "stage bad failed") || !strings.Contains(failed[0].FailureMessage(), "boom") {
		for _, f := range failed {
			t.Logf("failed: %v: %s", f.ContainerHierarchyTexts, f.FailureMessage())
		}
		t.Errorf("want exactly the bad stage's join spec failed, with its check's error")
	}
}

// suiteFailed takes the failure RunSpecs reports, which this test expects.
type suiteFailed struct{ failed bool }

func (s *suiteFailed) Fail() { s.failed = true }
