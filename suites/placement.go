package suites

import (
	"context"

	"github.com/tkg-e2e/harness/framework/assert"
	"github.com/tkg-e2e/harness/framework/placement"
	"github.com/tkg-e2e/harness/framework/stages"
)

// Placement checks the pod placement matrix on every cluster of the run.
var Placement = Stage{
	Definition: stages.Definition{Name: "placement", Needs: []string{"workload"}, Category: stages.Placement,
		Intervals: []string{"wait-pods"},
		Doc:       "the pod placement matrix on every cluster of the run (must / mustNot / optional / controlPlaneOnly)"},
	Spec: func(ctx context.Context, env func() *Env) {
		AssertionSpec(ctx, "places system pods on each cluster as the placement matrix says", func() AssertionSpecInput {
			e := env()
			return AssertionSpecInput{Env: e, Stage: "placement", Clusters: e.Clusters(), Wait: e.Interval("placement", "wait-pods"),
				Load: func() (assert.Check, error) {
					m, err := placement.Load(e.Config.Placement.Matrix)
					return placement.NewCheck(m), err
				},
				// index.html embeds the matrix page.
				PostCheck: func(_ context.Context, out *assert.Outcome) {
					e.UpdateReports(func(r *Reports) { r.PlacementHTML = out.HTMLPath })
				}}
		})
	},
}
