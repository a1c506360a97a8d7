package suites

import (
	"github.com/tkg-e2e/harness/framework/stages"
)

// Workload creates the workload clusters (clusters.workload, then
// clusters.workloads) from the (moved) management cluster, side by side.
var Workload = clusterStage(stages.Definition{Name: "workload", Needs: []string{"move"}, Category: stages.Provider,
	Doc: "the workload clusters from the management cluster, side by side: CNI, images, kapp-controller"},
	RoleWorkload, RoleManagement)
