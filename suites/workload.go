package suites

import (
	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/stages"
)

// Workload creates a workload cluster from the (moved) management cluster.
var Workload = clusterStage(stages.Definition{Name: "workload", Needs: []string{"move"}, Category: stages.Provider,
	Doc: "a workload cluster from the management cluster, CNI, images, kapp-controller"},
	RoleWorkload, RoleManagement, func(c *config.Config) config.WorkloadCluster { return c.Clusters.Workload })
