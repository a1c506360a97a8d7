package artifacts_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/tkg-e2e/harness/framework/artifacts"
	"github.com/tkg-e2e/harness/framework/artifacts/cluster"
	"github.com/tkg-e2e/harness/framework/artifacts/report"
	"github.com/tkg-e2e/harness/framework/artifacts/vsphere"
	"github.com/tkg-e2e/harness/framework/run"
)

// The order a suite wires the library in. In Ginkgo, the Writer belongs in
// SynchronizedBeforeSuite (made first, before the config is even loaded, so a
// config error is reported too), the collection in ReportAfterEach when the
// spec failed (or AfterSuite), and report.Write in ReportAfterSuite, which
// also runs after a failed BeforeSuite and hands over the Ginkgo report.
func Example() {
	ctx := context.Background()
	w, err := artifacts.New(artifacts.Options{
		Root:        os.Getenv("ARTIFACTS"),
		MaxFileSize: artifacts.DefaultMaxFileSize, // config artifacts.maxFileSize once the config is loaded
		Secrets:     []string{os.Getenv("VSPHERE_PASSWORD")},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	progress := w.Redactor().Writer(os.Stderr) // GinkgoWriter in a suite
	defer progress.Flush()

	state, _ := run.New(w.Root(), "r-1", "local", "config/local.yaml")

	// After a failure: every cluster the run knows, then vCenter.
	var clusters []artifacts.ClusterFindings
	for _, r := range state.Live() {
		if r.Kind != "kind-cluster" && r.Kind != "capi-cluster" {
			continue
		}
		f, err := cluster.Collect(ctx, w, cluster.Input{Name: r.Name, Role: r.Role, KubeconfigPath: r.Kubeconfig,
			DockerNodes: r.Kind == "kind-cluster" || r.Attributes["provider"] == "docker", ItemTimeout: 20 * time.Second})
		if err != nil {
			fmt.Fprintln(progress, err)
			continue
		}
		clusters = append(clusters, f)
	}
	vs, _ := vsphere.Collect(ctx, w, vsphere.Input{URL: "https://vcenter.example.com/sdk", Username: "administrator@vsphere.local",
		Password: os.Getenv("VSPHERE_PASSWORD"), VMFolder: "tkg-e2e/r-1", Since: state.Started, ItemTimeout: 20 * time.Second})

	var suite types.Report // ReportAfterSuite's argument
	res, err := report.Write(w, report.Input{RunID: "r-1", Profile: "local", State: state, Suite: &suite,
		Clusters: clusters, VSphere: &vs, PlacementMatrixHTML: "artifacts/placement/matrix.html"})
	fmt.Fprintln(progress, res.Verdict, res.Classification, err)
}
