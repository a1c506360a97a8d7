package suites

import (
	"context"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

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
	BeforeEach(func() {
		input = inputGetter()
		Expect(input.Env.Validate()).To(Succeed())
		Expect(input.Env.Config.Placement.Matrix).NotTo(BeEmpty(), "config placement.matrix is empty")
	})

	It("places system pods on each cluster as the placement matrix says", func(ctx SpecContext) {
		env := input.Env
		RunStage(ctx, env, stages.Placement, StageFuncs{Run: func(ctx context.Context) error {
			m, err := placement.Load(env.Config.Placement.Matrix)
			if err != nil {
				return err
			}
			out, err := runAssertion(ctx, env, placement.NewCheck(m), stages.Placement, "wait-pods", func(t assert.Target) bool {
				return len(input.Roles) == 0 || slices.Contains(input.Roles, t.Role)
			})
			if err != nil {
				return err
			}
			env.Set(EnvPlacementHTML, out.HTMLPath)
			AddReportEntry("placement matrix", out.Markdown)
			return out.Err()
		}})
	})
}
