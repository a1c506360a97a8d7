package suites

import (
	"context"

	"github.com/tkg-e2e/harness/framework/assert"
	"github.com/tkg-e2e/harness/framework/packages"
	"github.com/tkg-e2e/harness/framework/stages"
)

// Packages checks that every expected PackageInstall of every cluster of the
// run reaches ReconcileSucceeded; on failure the report quotes
// usefulErrorMessage (or the condition message when kapp-controller left it
// empty). Where TKG's ClusterBootstrap CRD exists, its status must mirror them.
var Packages = Stage{
	Definition: stages.Definition{Name: "packages", Needs: []string{"workload"}, Category: stages.Package,
		Intervals: []string{"wait-reconcile"},
		Doc:       "kapp-controller PackageInstalls reach ReconcileSucceeded; failures quote usefulErrorMessage"},
	Spec: func(ctx context.Context, env func() *Env) {
		AssertionSpec(ctx, "reconciles every expected PackageInstall", func() AssertionSpecInput {
			e := env()
			return AssertionSpecInput{Env: e, Stage: "packages", Clusters: e.Clusters(), Wait: e.Interval("packages", "wait-reconcile"),
				Load: func() (assert.Check, error) {
					l, err := packages.Load(e.Config.Packages.Expected)
					return packages.NewCheck(l), err
				}}
		})
	},
}
