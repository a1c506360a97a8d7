package suites

import (
	"github.com/tkg-e2e/harness/framework/stages"
)

// Management creates the management cluster from the bootstrap cluster and
// makes it a management cluster (providers, kapp-controller).
var Management = clusterStage(stages.Definition{Name: "management", Needs: []string{"bootstrap"}, Category: stages.Provider,
	// CAPV clones the template the ova stage imports (VSPHERE_TEMPLATE comes from ova.images).
	ProfileNeeds: map[string][]string{"vsphere": {"ova"}},
	Doc:          "a Cluster API cluster from the bootstrap cluster, CNI, images, `clusterctl init`, kapp-controller"},
	RoleManagement, RoleBootstrap)
