// Package verify runs the assertion stages (placement, packages) against
// clusters built by anything else: `make verify MANAGEMENT_KUBECONFIG=...
// WORKLOAD_KUBECONFIG=... [WINDOWS_WORKLOAD_KUBECONFIG=...]`.
package verify

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/redact"
	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/framework/stages"
	"github.com/tkg-e2e/harness/suites"
)

var (
	configPath     = flag.String("e2e.config", "../../config/local.yaml", "harness profile (its placement matrix, package list and intervals are used)")
	artifactFolder = flag.String("e2e.artifacts-folder", "", "where reports go (default ../../artifacts/verify-<time>)")
	mgmtKubeconfig = flag.String("e2e.management-kubeconfig", "", "kubeconfig of the management cluster")
	wlKubeconfig   = flag.String("e2e.workload-kubeconfig", "", "kubeconfig of the workload cluster")
	winKubeconfig  = flag.String("e2e.windows-workload-kubeconfig", "", "kubeconfig of a Windows workload cluster")
	wlName         = flag.String("e2e.workload-name", "", "workload cluster name, for package names like <cluster>-antrea (default: from config)")
)

var env *suites.Env

func TestVerify(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "TKG conformance checks on existing clusters")
}

var _ = BeforeSuite(func() {
	folder := *artifactFolder
	if folder == "" {
		folder = filepath.Join("..", "..", "artifacts", "verify-"+time.Now().UTC().Format("20060102-150405"))
	}
	folder, _ = filepath.Abs(folder)
	Expect(os.MkdirAll(folder, 0o755)).To(Succeed())
	env = &suites.Env{ArtifactFolder: folder, Redactor: redact.New(), External: true}
	env.Out = env.Redactor.Writer(GinkgoWriter)

	cfg, err := config.Load(config.LoadOptions{Path: *configPath})
	Expect(err).NotTo(HaveOccurred(), "the harness config is not valid")
	env.Config = cfg
	env.State, err = run.New(folder, filepath.Base(folder), cfg.Profile, cfg.Source)
	Expect(err).NotTo(HaveOccurred())

	Expect(*mgmtKubeconfig != "" || *wlKubeconfig != "" || *winKubeconfig != "").To(BeTrue(),
		"give at least one kubeconfig: MANAGEMENT_KUBECONFIG, WORKLOAD_KUBECONFIG or WINDOWS_WORKLOAD_KUBECONFIG")
	add := func(role, path, name, ns string) {
		if path == "" {
			return
		}
		_, err := os.Stat(path)
		Expect(err).NotTo(HaveOccurred(), "%s kubeconfig %s cannot be read", role, path)
		abs, _ := filepath.Abs(path)
		env.SetCluster(&suites.Cluster{Role: role, Name: name, Namespace: ns, Kubeconfig: abs, Provider: "external"})
	}
	name := cfg.Clusters.Workload.Name
	if *wlName != "" {
		name = *wlName
	}
	add(suites.RoleManagement, *mgmtKubeconfig, cfg.Clusters.Management.Name, cfg.Clusters.Management.Namespace)
	add(suites.RoleWorkload, *wlKubeconfig, name, cfg.Clusters.Workload.Namespace)
	add(suites.RoleWindowsWorkload, *winKubeconfig, name+"-windows", cfg.Clusters.Workload.Namespace)
})

var _ = ReportAfterSuite("verify report", func(ctx SpecContext, report Report) {
	suites.WriteReports(ctx, env, report)
})

var _ = Describe("Conformance checks", func() {
	getEnv := func() *suites.Env { return env }
	Context(stages.Placement, Label(stages.Placement), func() {
		suites.PlacementSpec(func() suites.PlacementSpecInput { return suites.PlacementSpecInput{Env: getEnv()} })
	})
	Context(stages.Packages, Label(stages.Packages), func() {
		suites.PackagesSpec(func() suites.PackagesSpecInput { return suites.PackagesSpecInput{Env: getEnv()} })
	})
})
