package suites

import (
	"context"

	"github.com/tkg-e2e/harness/framework/clusters"
	"github.com/tkg-e2e/harness/framework/stages"
)

// Workload creates a workload cluster from the (moved) management cluster.
var Workload = Stage{
	Definition: stages.Definition{Name: "workload", Needs: []string{"move"}, Category: stages.Provider,
		Intervals: clusterIntervals, Kinds: []string{clusters.ResourceKind},
		Doc: "a workload cluster from the management cluster, CNI, images, kapp-controller"},
	Spec: func(ctx context.Context, env func() *Env) {
		ClusterSpec(ctx, func() ClusterSpecInput {
			e := env()
			return clusterInput(e, "workload", RoleWorkload, RoleManagement, e.Config.Clusters.Workload, false)
		})
	},
	Cleanup: capiClusterCleanup,
}
