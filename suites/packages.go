package suites

import (
	"github.com/tkg-e2e/harness/framework/assert"
	"github.com/tkg-e2e/harness/framework/packages"
	"github.com/tkg-e2e/harness/framework/stages"
)

// Packages checks that every expected PackageInstall of every cluster of the
// run reaches ReconcileSucceeded; on failure the report quotes
// usefulErrorMessage (or the condition message when kapp-controller left it
// empty). Where TKG's ClusterBootstrap CRD exists, its status must mirror them.
var Packages = assertionStage(stages.Definition{Name: "packages", Needs: []string{"workload"}, Category: stages.Package,
	Intervals: []string{"wait-reconcile"}, Doc: "kapp-controller PackageInstalls reach ReconcileSucceeded; failures quote usefulErrorMessage"},
	"reconciles every expected PackageInstall",
	func(e *Env) (assert.Check, error) {
		l, err := packages.Load(e.Config.Packages.Expected)
		return packages.NewCheck(l), err
	}, nil)
