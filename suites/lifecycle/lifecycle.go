// Package lifecycle assembles the lifecycle suite: its stages in run order
// (suites.LifecycleStages) and the provisioners a profile may choose with
// driver: beside the harness's own clusterctl. Adding a provisioner is one
// package and one entry here.
package lifecycle

import (
	"github.com/tkg-e2e/harness/suites"
	"github.com/tkg-e2e/harness/suites/tanzucli"
)

// Registry is the lifecycle suite's stage registry.
var Registry = suites.MustRegistry(suites.TeardownScopes, suites.LifecycleStages...).WithProvisioners(tanzucli.Provisioner)
