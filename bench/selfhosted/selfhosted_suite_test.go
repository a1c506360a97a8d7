package selfhosted

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/test/e2e"
	"sigs.k8s.io/cluster-api/test/framework"
	"sigs.k8s.io/cluster-api/test/framework/bootstrap"
	"sigs.k8s.io/cluster-api/test/framework/clusterctl"
	"sigs.k8s.io/cluster-api/test/framework/ginkgoextensions"
)

// Flags: the names of Cluster API's e2e suite (test/e2e/e2e_suite_test.go).
var (
	// configPath is the E2EConfig template; the suite renders it from the
	// environment into the artifacts folder (RenderConfig) and loads that.
	configPath string
	// artifactFolder is where the rendered config, the clusterctl repository,
	// the logs and steps.tsv go.
	artifactFolder string
	// clusterctlConfig: an existing clusterctl config instead of a local
	// repository made from the E2EConfig (Cluster API's option; e.g. the kit's
	// $CLUSTERCTL_CONFIG, whose repository has the same files).
	clusterctlConfig string
	alsoLogToFile    bool
	skipCleanup      bool
)

func init() {
	flag.StringVar(&configPath, "e2e.config", "e2e-config.yaml", "E2EConfig template, rendered from the environment into the artifacts folder")
	flag.StringVar(&artifactFolder, "e2e.artifacts-folder", "", "folder where e2e test artifacts are stored (required)")
	flag.BoolVar(&alsoLogToFile, "e2e.also-log-to-file", true, "if true, ginkgo logs are additionally written to the `ginkgo-log.txt` file in the artifacts folder (including timestamps)")
	flag.BoolVar(&skipCleanup, "e2e.skip-resource-cleanup", false, "if true, the resource cleanup after tests will be skipped")
	flag.StringVar(&clusterctlConfig, "e2e.clusterctl-config", "", "file which tests will use as a clusterctl config. If it is not set, a local clusterctl repository (including a clusterctl config) will be created automatically.")
}

// Suite state, as in Cluster API's e2e suite.
var (
	ctx = ctrl.SetupSignalHandler()

	// watchesCtx is used in log streaming to be able to get cancelled via cancelWatches after ending the test suite.
	watchesCtx, cancelWatches = context.WithCancel(ctx)

	e2eConfig                *clusterctl.E2EConfig
	clusterctlConfigPath     string
	bootstrapClusterProvider bootstrap.ClusterProvider
	bootstrapClusterProxy    framework.ClusterProxy
)

func TestSelfHosted(t *testing.T) {
	g := NewWithT(t)
	ctrl.SetLogger(klog.Background())

	g.Expect(artifactFolder).NotTo(BeEmpty(), "-e2e.artifacts-folder is required")
	var err error
	artifactFolder, err = filepath.Abs(artifactFolder)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(os.MkdirAll(artifactFolder, 0o755)).To(Succeed(), "Can't create e2e.artifacts-folder %q", artifactFolder)

	RegisterFailHandler(Fail)
	if alsoLogToFile {
		w, err := ginkgoextensions.EnableFileLogging(filepath.Join(artifactFolder, "ginkgo-log.txt"))
		g.Expect(err).ToNot(HaveOccurred())
		defer w.Close()
	}
	RunSpecs(t, "capi-e2e self-hosted (bench)")
}

// BeforeSuite is Cluster API's SynchronizedBeforeSuite for one process, with
// the kit's differences: the config is rendered first, cert-manager comes
// from the kit's clusterctl config, and kind gets the kit's node image by tag.
var _ = BeforeSuite(func() {
	Expect(configPath).To(BeAnExistingFile(), "Invalid test suite argument. e2e.config should be an existing file.")

	By("Initializing a runtime.Scheme with all the GVK relevant for this test")
	scheme := initScheme()

	rendered := filepath.Join(artifactFolder, "e2e-config.yaml")
	e2e.Byf("Rendering the e2e test configuration %q into %q", configPath, rendered)
	Expect(RenderConfig(configPath, rendered, os.LookupEnv)).To(Succeed())

	e2e.Byf("Loading the e2e test configuration from %q", rendered)
	e2eConfig = clusterctl.LoadE2EConfig(ctx, clusterctl.LoadE2EConfigInput{ConfigPath: rendered})
	Expect(e2eConfig).ToNot(BeNil(), "Failed to load E2E config from %s", rendered)
	Expect(e2eConfig.Variables).To(HaveKey(e2e.CNIPath), "Missing %s variable in the config", e2e.CNIPath)
	Expect(e2eConfig.MustGetVariable(e2e.CNIPath)).To(BeAnExistingFile(), "The %s variable should resolve to an existing file", e2e.CNIPath)

	if clusterctlConfig == "" {
		e2e.Byf("Creating a clusterctl local repository into %q", filepath.Join(artifactFolder, "repository"))
		// Cluster API also registers a transformation that puts the CNI into the
		// ClusterResourceSet ConfigMap of its templates (data: ${CNI_RESOURCES});
		// the kit's template has none, so the CNI goes in through applyCNIWhenInitialized.
		clusterctlConfigPath = clusterctl.CreateRepository(ctx, clusterctl.CreateRepositoryInput{
			E2EConfig:        e2eConfig,
			RepositoryFolder: filepath.Join(artifactFolder, "repository"),
		})
		Expect(clusterctlConfigPath).To(BeAnExistingFile(), "The clusterctl config file does not exist in the local repository")
		kit := os.Getenv("CLUSTERCTL_CONFIG")
		Expect(kit).NotTo(BeEmpty(), "CLUSTERCTL_CONFIG is unset: it is the kit's clusterctl config, whose cert-manager entry the local repository's config needs (. /var/cache/testbed/out/env.sh)")
		e2e.Byf("Copying the cert-manager entry of %q into %q", kit, clusterctlConfigPath)
		Expect(CopyCertManager(kit, clusterctlConfigPath)).To(Succeed())
	} else {
		e2e.Byf("Using existing clusterctl config %q", clusterctlConfig)
		clusterctlConfigPath = clusterctlConfig
	}

	By("Setting up the bootstrap cluster")
	// The kit's node image by tag: Cluster API's KubernetesVersion input maps
	// to a kindest/node digest that a locally built image does not have.
	nodeImage := os.Getenv("KIND_NODE_IMAGE")
	Expect(nodeImage).NotTo(BeEmpty(), "KIND_NODE_IMAGE is unset (. /var/cache/testbed/out/env.sh)")
	bootstrapClusterProvider = bootstrap.CreateKindBootstrapClusterAndLoadImages(ctx, bootstrap.CreateKindBootstrapClusterAndLoadImagesInput{
		Name:               e2eConfig.ManagementClusterName,
		CustomNodeImage:    nodeImage,
		RequiresDockerSock: e2eConfig.HasDockerProvider(),
		Images:             e2eConfig.Images,
		LogFolder:          filepath.Join(artifactFolder, "kind"),
	})
	Expect(bootstrapClusterProvider).ToNot(BeNil(), "Failed to create a bootstrap cluster")
	kubeconfigPath := bootstrapClusterProvider.GetKubeconfigPath()
	Expect(kubeconfigPath).To(BeAnExistingFile(), "Failed to get the kubeconfig file for the bootstrap cluster")
	// With the Docker log collector, as Cluster API's per-process setup makes it.
	bootstrapClusterProxy = framework.NewClusterProxy("bootstrap", kubeconfigPath, scheme, framework.WithMachineLogCollector(framework.DockerLogCollector{}))
	Expect(bootstrapClusterProxy).ToNot(BeNil(), "Failed to get a bootstrap cluster proxy")

	By("Initializing the bootstrap cluster")
	clusterctl.InitManagementClusterAndWatchControllerLogs(watchesCtx, clusterctl.InitManagementClusterAndWatchControllerLogsInput{
		ClusterProxy:              bootstrapClusterProxy,
		ClusterctlConfigPath:      clusterctlConfigPath,
		InfrastructureProviders:   e2eConfig.InfrastructureProviders(),
		IPAMProviders:             e2eConfig.IPAMProviders(),
		RuntimeExtensionProviders: e2eConfig.RuntimeExtensionProviders(),
		AddonProviders:            e2eConfig.AddonProviders(),
		LogFolder:                 filepath.Join(artifactFolder, "clusters", bootstrapClusterProxy.GetName()),
	}, e2eConfig.GetIntervals(bootstrapClusterProxy.GetName(), "wait-controllers")...)
})

// AfterSuite is Cluster API's SynchronizedAfterSuite for one process.
var _ = AfterSuite(func() {
	By("Dumping logs from the bootstrap cluster")
	dumpKindClusterLogs(ctx, artifactFolder, bootstrapClusterProxy)

	By("Tearing down the management cluster")
	if !skipCleanup {
		cancelWatches()
		if bootstrapClusterProxy != nil {
			bootstrapClusterProxy.Dispose(ctx)
		}
		if bootstrapClusterProvider != nil {
			bootstrapClusterProvider.Dispose(ctx)
		}
	}
})

// ReportAfterSuite writes steps.tsv for scripts/bench-selfhosted.sh: each
// By() step with its seconds (until the next step or the end of its node),
// and each node's total.
var _ = ReportAfterSuite("steps", func(report Report) {
	if artifactFolder == "" {
		return
	}
	_ = os.WriteFile(filepath.Join(artifactFolder, "steps.tsv"), []byte(stepTimes(report)), 0o600)
})

const beforeFirstStep = "(before the first step)"

// stepTimes renders "node<TAB>step<TAB>seconds" lines from the spec events.
func stepTimes(report Report) string {
	var b strings.Builder
	for _, r := range report.SpecReports {
		if r.LeafNodeType.Is(types.NodeTypeReportAfterSuite | types.NodeTypeReportBeforeSuite) {
			continue
		}
		events := append([]types.SpecEvent(nil), r.SpecEvents...)
		sort.SliceStable(events, func(i, j int) bool {
			return events[i].TimelineLocation.Order < events[j].TimelineLocation.Order
		})
		node := r.LeafNodeType.String()
		var step string
		var since time.Time
		closeStep := func(at time.Time) {
			d := at.Sub(since).Seconds()
			// The gap before a node's first step only when it is worth a line.
			if step != "" && !since.IsZero() && (step != beforeFirstStep || d >= 0.5) {
				fmt.Fprintf(&b, "%s\t%s\t%.1f\n", node, step, d)
			}
			step = ""
		}
		sawNodes := false
		for _, ev := range events {
			at := ev.TimelineLocation.Time
			switch ev.SpecEventType {
			case types.SpecEventNodeStart:
				sawNodes = true
				closeStep(at)
				node = ev.NodeType.String()
				step, since = beforeFirstStep, at
			case types.SpecEventByStart:
				closeStep(at)
				step, since = oneLine(ev.Message), at
			case types.SpecEventNodeEnd:
				closeStep(at)
				fmt.Fprintf(&b, "%s\t(total)\t%.1f\n", ev.NodeType.String(), ev.Duration.Seconds())
			}
		}
		closeStep(r.EndTime)
		if !sawNodes {
			fmt.Fprintf(&b, "%s\t(total)\t%.1f\n", r.LeafNodeType.String(), r.RunTime.Seconds())
		}
	}
	return b.String()
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

func initScheme() *runtime.Scheme {
	sc := runtime.NewScheme()
	framework.TryAddDefaultSchemes(sc)
	return sc
}

// dumpKindClusterLogs is Cluster API's (test/e2e/common.go, unexported there):
// the kind nodes' logs through the proxy's log collector.
func dumpKindClusterLogs(ctx context.Context, artifactFolder string, clusterProxy framework.ClusterProxy) {
	if clusterProxy == nil {
		return
	}
	clusterLogCollector := clusterProxy.GetLogCollector()
	if clusterLogCollector == nil {
		return
	}
	nodes, err := clusterProxy.GetClientSet().CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		fmt.Printf("Failed to get nodes for the cluster: %v\n", err)
		return
	}
	for i := range nodes.Items {
		nodeName := nodes.Items[i].GetName()
		err = clusterLogCollector.CollectMachineLog(
			ctx,
			clusterProxy.GetClient(),
			// The kind cluster is not a CAPI cluster: a fake Machine wraps the node.
			&clusterv1.Machine{
				Spec:       clusterv1.MachineSpec{ClusterName: nodeName},
				ObjectMeta: metav1.ObjectMeta{Name: nodeName},
			},
			filepath.Join(artifactFolder, "clusters", clusterProxy.GetName(), "machines", nodeName),
		)
		if err != nil {
			fmt.Printf("Failed to get logs for the cluster node %s: %v\n", nodeName, err)
		}
	}
}
