package suites

import (
	"slices"

	"github.com/tkg-e2e/harness/framework/assert"
	"github.com/tkg-e2e/harness/framework/placement"
	"github.com/tkg-e2e/harness/framework/stages"
)

// PlacementSpecInput is the input of PlacementSpec.
type PlacementSpecInput struct {
	Env *Env
	// Roles limits the check to these cluster roles; empty means every
	// cluster of the run whose role the matrix has a column for.
	Roles []string
}

// Env keys for what the placement stage leaves for the report.
const (
	EnvPlacementHTML     = "placement.html"
	EnvPlacementMarkdown = "placement.md"
)

// PlacementSpec evaluates every cluster of the run against its column of the
// placement matrix and fails with the whole matrix when any cell deviates.
func PlacementSpec(inputGetter func() PlacementSpecInput) {
	var input PlacementSpecInput
	assertionSpec{
		It:    "places system pods on each cluster as the placement matrix says",
		Stage: stages.Placement, Interval: "wait-pods", Entry: "placement matrix",
		Setting: "placement.matrix", File: func(env *Env) string { return env.Config.Placement.Matrix },
		Check: func(path string) (assert.Check, error) {
			m, err := placement.Load(path)
			return placement.NewCheck(m), err
		},
		Keep: func(t assert.Target) bool { return len(input.Roles) == 0 || slices.Contains(input.Roles, t.Role) },
		Done: func(env *Env, out *assert.Outcome) { env.Set(EnvPlacementHTML, out.HTMLPath) },
	}.define(func() *Env { input = inputGetter(); return input.Env })
}
