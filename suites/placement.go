package suites

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tkg-e2e/harness/framework/placement"
	"github.com/tkg-e2e/harness/framework/stages"
)

// Placement checks the pod placement matrix on every cluster of the run.
var Placement = Stage{
	Definition: stages.Definition{Name: "placement", Needs: []string{"workload"}, Category: stages.Placement,
		Intervals: []string{"wait-pods"},
		Doc:       "the pod placement matrix on every cluster of the run (must / mustNot / optional / controlPlaneOnly)"},
	Spec: func(ctx context.Context, env func() *Env) {
		PlacementSpec(ctx, func() PlacementSpecInput { return PlacementSpecInput{Env: env()} })
	},
}

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
func PlacementSpec(_ context.Context, inputGetter func() PlacementSpecInput) {
	var input PlacementSpecInput
	BeforeEach(func() {
		input = inputGetter()
		Expect(input.Env.Validate()).To(Succeed())
		Expect(input.Env.Config.Placement.Matrix).NotTo(BeEmpty(), "config placement.matrix is empty")
	})

	It("places system pods on each cluster as the placement matrix says", func(ctx SpecContext) {
		env := input.Env
		RunStage(ctx, env, "placement", StageFuncs{Run: func(ctx context.Context) error {
			m, err := placement.Load(env.Config.Placement.Matrix)
			if err != nil {
				return err
			}
			iv := env.Interval("placement", "wait-pods")
			var reports []*placement.Report
			var failures []error
			checked := 0
			for _, c := range env.Clusters() {
				role := placement.Role(c.Role)
				if !m.HasRole(role) || (len(input.Roles) > 0 && !slices.Contains(input.Roles, c.Role)) {
					continue
				}
				cl, cs, err := clientsFor(c)
				if err != nil {
					return err
				}
				checked++
				rep, err := placement.Check(ctx, placement.CheckInput{Client: cl, Clientset: cs, Matrix: m, Role: role, Cluster: c.Name,
					Timeout: iv.Timeout, Interval: iv.Poll, Redactor: env.Redactor, Progress: env.Out, Prefix: "[placement]"})
				if rep != nil {
					reports = append(reports, rep)
				}
				var failed *placement.FailedError
				switch {
				case errors.As(err, &failed):
					failures = append(failures, fmt.Errorf("%s cluster %q: %s", c.Role, c.Name, rep.Summary()))
				case err != nil:
					return err
				}
			}
			if checked == 0 {
				return fmt.Errorf("no cluster of this run has a role the matrix %s checks (%v)", m.Source, m.Roles)
			}
			md := placement.Markdown(m, reports...)
			if err := os.WriteFile(env.Path(EnvPlacementMarkdown), []byte(env.Redactor.String(md)), 0o644); err != nil {
				return err
			}
			if err := placement.WriteHTMLFile(env.Path(EnvPlacementHTML), m, reports...); err != nil {
				return err
			}
			env.UpdateReports(func(r *Reports) { r.PlacementHTML = env.Path(EnvPlacementHTML) })
			AddReportEntry("placement matrix", md)
			if len(failures) > 0 {
				return fmt.Errorf("%w\n\n%s", errors.Join(failures...), md)
			}
			return nil
		}})
	})
}
