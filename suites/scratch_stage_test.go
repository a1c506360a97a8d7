package suites_test

// This file is the whole of a new stage, as a newcomer would add one: its
// Definition, its spec, and the cleanup of what it records. The test below
// adds it to the lifecycle registry with one entry and runs it for real in a
// Ginkgo suite: state, labels, intervals, classification, cleanup and leak
// check all come from that one entry.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tkg-e2e/harness/framework/cleanup"
	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/framework/stages"
	"github.com/tkg-e2e/harness/framework/wait"
	"github.com/tkg-e2e/harness/suites"
)

// scratchKind is the resource kind the scratch stage records.
const scratchKind = "scratch-dir"

// Scratch creates a folder outside the artifacts, waits for a marker file in
// it, and records it so cleanup removes it.
var Scratch = suites.Stage{
	Definition: stages.Definition{Name: "scratch", Needs: []string{"ova"}, Category: stages.Infrastructure,
		Intervals: []string{"wait-pods"}, Kinds: []string{scratchKind}, Doc: "a folder with a marker file (test stage)"},
	Spec: func(ctx context.Context, env func() *suites.Env) {
		ScratchSpec(ctx, func() ScratchSpecInput {
			e := env()
			// Beside the artifacts folder, so nothing else removes it.
			return ScratchSpecInput{Env: e, Dir: filepath.Join(filepath.Dir(e.ArtifactFolder), "scratch"), Wait: e.Interval("scratch", "wait-pods")}
		})
	},
	Cleanup: func(o suites.CleanupOptions) suites.StageCleanup {
		return suites.StageCleanup{
			Deleters: map[string]cleanup.Deleter{scratchKind: func(_ context.Context, r run.Resource) (string, error) {
				if err := os.RemoveAll(r.Name); err != nil {
					return "", err
				}
				return "removed", o.State.SetResourceState(r.Key(), "deleted")
			}},
			LeakChecks: []cleanup.LeakCheck{func(_ context.Context, s *run.State) ([]string, string, error) {
				var leaks []string
				for _, r := range s.Resources {
					if _, err := os.Stat(r.Name); r.Kind == scratchKind && err == nil {
						leaks = append(leaks, r.Name)
					}
				}
				return leaks, "scratch folders of the run", nil
			}},
		}
	},
}

// ScratchSpecInput is the input of ScratchSpec.
type ScratchSpecInput struct {
	Env  *suites.Env
	Dir  string
	Wait config.Interval
}

// ScratchSpec is the scratch stage's spec.
func ScratchSpec(_ context.Context, inputGetter func() ScratchSpecInput) {
	var input ScratchSpecInput
	BeforeEach(func() {
		input = inputGetter()
		Expect(input.Env.Validate()).To(Succeed())
		Expect(input.Dir).NotTo(BeEmpty(), "ScratchSpecInput.Dir is required")
	})
	It("creates a folder and waits for its marker", func(ctx SpecContext) {
		env := input.Env
		suites.RunStage(ctx, env, "scratch", suites.StageFuncs{Run: func(ctx context.Context) error {
			if err := env.State.PutResource(run.Resource{Kind: scratchKind, Name: input.Dir, State: "creating", CreatedBy: "scratch",
				DeleteHint: "rm -rf " + input.Dir}); err != nil {
				return err
			}
			if err := os.MkdirAll(input.Dir, 0o700); err != nil {
				return err
			}
			go os.WriteFile(filepath.Join(input.Dir, "marker"), []byte("x"), 0o600)
			return wait.For(ctx, wait.Options{What: "the marker file in " + input.Dir, Timeout: input.Wait.Timeout, Interval: input.Wait.Poll,
				Progress: env.Out, Prefix: "[scratch]"}, func(context.Context) (bool, string, error) {
				_, err := os.Stat(filepath.Join(input.Dir, "marker"))
				if errors.Is(err, os.ErrNotExist) {
					return false, "no marker yet", nil
				}
				return err == nil, fmt.Sprintf("stat: %v", err), nil
			})
		}})
	})
}
