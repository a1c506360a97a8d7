package selfhosted

import (
	"context"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	"sigs.k8s.io/cluster-api/test/e2e"
	"sigs.k8s.io/cluster-api/test/framework"
	"sigs.k8s.io/cluster-api/test/framework/bootstrap"
	"sigs.k8s.io/cluster-api/test/framework/clusterctl"
)

// Cluster API's SelfHostedSpec with the sizes and flavor of `make e2e
// FOCUS=move` (config/local.yaml's management cluster): a CAPD cluster with
// one control plane machine and one worker from the development flavor,
// made a management cluster, `clusterctl move`d into itself; then, as the
// spec always does, moved back to the bootstrap cluster and deleted there.
// No Kubernetes upgrade (SkipUpgrade): the kit has one Kubernetes version and
// our move flow upgrades nothing.
var _ = Describe("When testing Cluster API working on self-hosted clusters (bench: the kit's development flavor)", func() {
	e2e.SelfHostedSpec(ctx, func() e2e.SelfHostedSpecInput {
		return e2e.SelfHostedSpecInput{
			E2EConfig:                e2eConfig,
			ClusterctlConfigPath:     clusterctlConfigPath,
			BootstrapClusterProxy:    bootstrapClusterProxy,
			ArtifactFolder:           artifactFolder,
			SkipCleanup:              skipCleanup,
			Flavor:                   "development",
			InfrastructureProvider:   ptr.To("docker"),
			SkipUpgrade:              true,
			ControlPlaneMachineCount: ptr.To[int64](1),
			WorkerMachineCount:       ptr.To[int64](1),
			ControlPlaneWaiters:      clusterctl.ControlPlaneWaiters{WaitForControlPlaneInitialized: applyCNIWhenInitialized},
			PostNamespaceCreated:     loadImagesIntoSelfHosted,
		}
	})
})

// applyCNIWhenInitialized is the default WaitForControlPlaneInitialized
// followed by the CNI variable's manifest applied to the new cluster, as
// ApplyCustomClusterTemplateAndWait does for its CNIManifestPath input (which
// SelfHostedSpec does not set). Cluster API's own templates carry the CNI in a
// ClusterResourceSet instead; the kit's development template has none, and
// `make e2e` applies the same manifest at the same point.
func applyCNIWhenInitialized(ctx context.Context, input clusterctl.ApplyCustomClusterTemplateAndWaitInput, result *clusterctl.ApplyCustomClusterTemplateAndWaitResult) {
	result.ControlPlane = framework.DiscoveryAndWaitForControlPlaneInitialized(ctx, framework.DiscoveryAndWaitForControlPlaneInitializedInput{
		Lister:  input.ClusterProxy.GetClient(),
		Cluster: result.Cluster,
	}, input.WaitForControlPlaneIntervals...)

	cniPath := e2eConfig.MustGetVariable(e2e.CNIPath)
	e2e.Byf("Installing the CNI %s on cluster %s (bench: the kit's template has no ClusterResourceSet)", cniPath, result.Cluster.Name)
	cni, err := os.ReadFile(cniPath) //nolint:gosec // the kit's manifest
	Expect(err).NotTo(HaveOccurred())
	workload := input.ClusterProxy.GetWorkloadCluster(ctx, result.Cluster.Namespace, result.Cluster.Name)
	Eventually(func() error {
		return workload.CreateOrUpdate(ctx, cni)
	}, input.WaitForControlPlaneIntervals...).Should(Succeed(), "Failed to apply the CNI %s to cluster %s", cniPath, result.Cluster.Name)
}

// loadImagesIntoSelfHosted runs where SelfHostedSpec calls PostNamespaceCreated:
// for the bootstrap cluster (nothing to do: its images were loaded when kind
// made it) and for the new cluster right before `clusterctl init` there. The
// kit has no registry, so the providers' and cert-manager's images must be in
// the node containers first. Cluster API's templates have CAPD load them while
// it creates the machines (preLoadImages from DOCKER_PRELOAD_IMAGES, which the
// spec sets); the kit's ClusterClass has no such variable, so they are loaded
// here, with the framework's kind loader: CAPD labels its node containers as
// kind does (io.x-k8s.kind.cluster=<cluster name>, the proxy's name).
func loadImagesIntoSelfHosted(proxy framework.ClusterProxy, _ string) {
	if bootstrapClusterProxy == nil || proxy.GetName() == bootstrapClusterProxy.GetName() {
		return
	}
	e2e.Byf("Loading %d images into the nodes of cluster %s (bench: the kit's ClusterClass has no preLoadImages)", len(e2eConfig.Images), proxy.GetName())
	Expect(bootstrap.LoadImagesToKindCluster(ctx, bootstrap.LoadImagesToKindClusterInput{
		Name:   proxy.GetName(),
		Images: e2eConfig.Images,
	})).To(Succeed())
}
