package smoke_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/tkg-e2e/harness/framework/artifacts"
	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/smoke"
)

// How a stage wires it in: the cluster from Cluster.Connect, the timeout
// and poll from the stage's interval key (Env.Interval), smoke.md through
// the artifacts Writer (redacted, capped) whether or not the run failed.
func Example() {
	ctx := context.Background()
	w, err := artifacts.New(artifacts.Options{Root: os.Getenv("ARTIFACTS"), MaxFileSize: artifacts.DefaultMaxFileSize})
	if err != nil {
		fmt.Println(err)
		return
	}
	wl, err := kube.Connect(os.Getenv("WORKLOAD_KUBECONFIG"))
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := smoke.Run(ctx, smoke.Input{
		Cluster: wl, ClusterName: "workload",
		Image:   "busybox:1.35.0",                       // config: the kit's busybox image
		Timeout: 5 * time.Minute, Poll: 2 * time.Second, // config: intervals "<stage>/smoke"
		Progress: w.Redactor().Writer(os.Stderr), // GinkgoWriter in a suite
		Redactor: w.Redactor(),
	})
	if res != nil {
		_ = w.WriteFile("workload/smoke.md", []byte(res.Markdown()))
	}
	if err != nil {
		fmt.Println(err) // Expect(err).NotTo(HaveOccurred()) in a spec: the message names the step and the last state
	}
}
