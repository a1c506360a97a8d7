package suites

import (
	"github.com/tkg-e2e/harness/framework/assert"
	"github.com/tkg-e2e/harness/framework/placement"
	"github.com/tkg-e2e/harness/framework/stages"
)

// Placement checks the pod placement matrix on every cluster of the run.
var Placement = assertionStage(stages.Definition{Name: "placement", Needs: []string{"workload"}, Category: stages.Placement,
	Intervals: []string{"wait-pods"}, Doc: "the pod placement matrix on every cluster of the run (must / mustNot / optional / controlPlaneOnly)"},
	"places system pods on each cluster as the placement matrix says",
	func(e *Env) (assert.Check, error) {
		m, err := placement.Load(e.Config.Placement.Matrix)
		return placement.NewCheck(m), err
	},
	// index.html embeds the matrix page.
	func(e *Env, out *assert.Outcome) {
		e.UpdateReports(func(r *Reports) { r.PlacementHTML = out.HTMLPath })
	})
