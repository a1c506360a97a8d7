// Package verify runs the check stages (health, smoke, placement, packages)
// against clusters built by anything else: `make verify
// MANAGEMENT_KUBECONFIG=... WORKLOAD_KUBECONFIG=...
// [WINDOWS_WORKLOAD_KUBECONFIG=...] [READ_ONLY=1]`. Smoke makes the workload
// cluster do work (a Deployment, a Service, DNS, traffic across nodes) in a
// namespace of its own that it removes, also on Ctrl-C; READ_ONLY=1 leaves
// it out (reported as skipped, with why) for clusters that must not be
// written to.
package verify

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tkg-e2e/harness/framework/infrastructure"
	"github.com/tkg-e2e/harness/suites"
	"github.com/tkg-e2e/harness/suites/lifecycle"
)

var (
	profile = suites.RegisterProfileFlags("../../config/local.yaml", "harness profile (its placement matrix, package list and intervals are used)",
		"where reports go (default ../../artifacts/verify-<time>)")
	mgmtKubeconfig = flag.String("e2e.management-kubeconfig", "", "kubeconfig of the management cluster")
	wlKubeconfig   = flag.String("e2e.workload-kubeconfig", "", "kubeconfig of the workload cluster")
	winKubeconfig  = flag.String("e2e.windows-workload-kubeconfig", "", "kubeconfig of a Windows workload cluster")
	wlName         = flag.String("e2e.workload-name", "", "workload cluster name, for package names like <cluster>-antrea (default: from config)")
	readOnly       = flag.Bool("e2e.read-only", false, "write nothing to the clusters: no smoke workload, no scratch namespace for the admission probe")
)

var env *suites.Env

func TestVerify(t *testing.T) {
	RegisterFailHandler(Fail)
	defer suites.RestoreOutput() // ProtectSecrets masks stdout and stderr; this writes the last lines
	RunSpecs(t, "TKG conformance checks on existing clusters")
}

var _ = BeforeSuite(func() {
	folder := profile.ArtifactFolder(func() string {
		return filepath.Join("..", "..", "artifacts", "verify-"+time.Now().UTC().Format("20060102-150405"))
	})
	var err error
	env, err = suites.NewEnv(suites.EnvOptions{Registry: lifecycle.Registry, ConfigPath: profile.ConfigPath(), Overrides: profile.Overrides(), ArtifactFolder: folder,
		External: true, ReadOnly: *readOnly, Out: GinkgoWriter})
	Expect(err).NotTo(HaveOccurred())
	Expect(suites.ProtectSecrets(env)).To(Succeed())
	cfg := env.Config

	Expect(*mgmtKubeconfig != "" || *wlKubeconfig != "" || *winKubeconfig != "").To(BeTrue(),
		"give at least one kubeconfig: MANAGEMENT_KUBECONFIG, WORKLOAD_KUBECONFIG or WINDOWS_WORKLOAD_KUBECONFIG")
	add := func(role, path, name, ns string) {
		if path == "" {
			return
		}
		_, err := os.Stat(path)
		Expect(err).NotTo(HaveOccurred(), "%s kubeconfig %s cannot be read", role, path)
		abs, _ := filepath.Abs(path)
		env.SetCluster(&suites.Cluster{Role: role, Name: name, Namespace: ns, Kubeconfig: abs, Infrastructure: infrastructure.External})
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

// The check stages of the lifecycle registry, without their prerequisites:
// the clusters come from elsewhere.
var _ = Describe("Conformance checks", func() {
	for _, name := range []string{"health", "smoke", "placement", "packages"} {
		s, _ := lifecycle.Registry.Stage(name)
		Context(s.Name, Label(s.Name), func() {
			if name == "smoke" && *readOnly {
				suites.LeftOutReadOnly(name, "it creates a namespace, a Deployment, a Service and pods on the workload cluster",
					func() *suites.Env { return env })
				return
			}
			s.Spec(context.Background(), func() *suites.Env { return env })
		})
	}
})
