package suites_test

// This file is the whole of a stage that runs on every workload cluster of
// the run: its Definition and its spec, which hands the per-cluster work to
// suites.EachWorkload. TestScratchStageRuns registers it with one entry
// and runs it for real beside two workload clusters: each gets its own
// result in state.json and its own steps.

import (
	"context"
	"os"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/tkg-e2e/harness/framework/stages"
	"github.com/tkg-e2e/harness/suites"
)

// ScratchEach writes one file per workload cluster into the artifacts.
var ScratchEach = suites.Stage{
	Definition: stages.Definition{Name: "scratch-each", Needs: []string{"ova"}, Category: stages.Infrastructure,
		Doc: "a file per workload cluster (test stage)"},
	Spec: func(ctx context.Context, env func() *suites.Env) {
		It("writes a file per workload cluster", func(ctx SpecContext) {
			e := env()
			suites.RunStage(ctx, e, "scratch-each", suites.StageFuncs{Run: func(ctx context.Context) error {
				return suites.EachWorkload(ctx, e, "scratch-each", func(ctx context.Context, c *suites.Cluster) ([]suites.Step, error) {
					start := time.Now()
					err := os.WriteFile(e.Path("scratch-"+c.Key()+".txt"), []byte(c.Name), 0o600)
					return []suites.Step{{Name: "write", Duration: time.Since(start)}}, err
				})
			}})
		})
	},
}
