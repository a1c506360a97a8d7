package suites

import (
	"context"

	"github.com/tkg-e2e/harness/framework/clusters"
	"github.com/tkg-e2e/harness/framework/stages"
)

// Management creates the management cluster from the bootstrap cluster and
// makes it a management cluster (providers, kapp-controller).
var Management = Stage{
	Definition: stages.Definition{Name: "management", Needs: []string{"bootstrap"}, Category: stages.Provider,
		Intervals: append([]string{"init-providers", "wait-providers"}, clusterIntervals...),
		Kinds:     []string{clusters.ResourceKind},
		Doc:       "a Cluster API cluster from the bootstrap cluster, CNI, images, `clusterctl init`, kapp-controller"},
	Spec: func(ctx context.Context, env func() *Env) {
		ClusterSpec(ctx, func() ClusterSpecInput {
			e := env()
			return clusterInput(e, "management", RoleManagement, RoleBootstrap, e.Config.Clusters.Management, true)
		})
	},
	Cleanup: capiClusterCleanup,
}
