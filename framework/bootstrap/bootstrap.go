// Package bootstrap composes the run's bootstrap cluster: a kind cluster
// (framework/kind) with the docker socket mounted for CAPD, the configured
// images loaded into its node (framework/node), and the Cluster API providers
// installed (framework/providers). It holds no mechanism of its own, so the
// pieces can be used, and cleaned up, without it.
package bootstrap

import (
	"context"
	"io"

	"sigs.k8s.io/cluster-api/test/framework/clusterctl"

	"github.com/tkg-e2e/harness/framework/kind"
	"github.com/tkg-e2e/harness/framework/node"
	"github.com/tkg-e2e/harness/framework/providers"
	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/framework/wait"
)

// Timeouts of Bootstrap's steps, one config interval each; Create,
// LoadImages and Init do not poll, so only their Timeout counts.
type Timeouts struct {
	Create         wait.Interval
	NodesReady     wait.Interval
	LoadImages     wait.Interval
	Init           wait.Interval
	ProvidersReady wait.Interval
}

// Input is the input of Bootstrap.
type Input struct {
	// Name of the kind cluster; use a run-specific prefix, other people's
	// clusters may share the docker host.
	Name      string
	NodeImage string
	// KubeconfigPath is written with the kind cluster's kubeconfig.
	KubeconfigPath string
	// Images to load into the node before `clusterctl init` (CAPI, cert-manager...).
	Images []clusterctl.ContainerImage
	// PullImages pulls images missing locally (machines with registry access).
	PullImages           bool
	ClusterctlConfigPath string
	Providers            providers.Providers
	State                *run.State
	// CreatedBy is the stage recorded with the resource (e.g. "bootstrap").
	CreatedBy string
	Timeouts  Timeouts
	Progress  io.Writer
	Prefix    string
}

// Result of Bootstrap.
type Result struct {
	Cluster   *kind.Cluster
	Images    *node.LoadImagesResult
	Providers *providers.Result
	// Steps are the step durations in order: kind-create, load-images, clusterctl-init, providers-ready.
	Steps wait.Steps
}

// Bootstrap creates the kind bootstrap cluster (docker socket mounted only
// when CAPD is among the providers), loads the images (if any: without them
// the node pulls), runs `clusterctl init` with cert-manager, core,
// kubeadm bootstrap and control plane and the infrastructure providers, and
// waits for every provider Deployment to be Available.
func Bootstrap(ctx context.Context, in Input) (*Result, error) {
	res := &Result{}
	var err error
	var pre *node.Preload
	if len(in.Images) > 0 {
		// The node takes images while kind runs kubeadm in it; load-images then only tops up.
		pre = node.StartPreload(ctx, node.LoadImagesInput{ClusterName: in.Name, Images: in.Images, Pull: in.PullImages,
			Timeout: in.Timeouts.LoadImages.Timeout, Progress: in.Progress, Prefix: in.Prefix}, in.Timeouts.LoadImages.Poll)
		defer pre.Stop()
	}
	if err = res.Steps.Time("kind-create", func() error {
		res.Cluster, err = kind.Create(ctx, kind.CreateInput{
			Name: in.Name, NodeImage: in.NodeImage, KubeconfigPath: in.KubeconfigPath, MountDockerSocket: in.Providers.MakesContainerNodes(),
			State: in.State, CreatedBy: in.CreatedBy, Timeout: in.Timeouts.Create.Timeout, NodesReady: in.Timeouts.NodesReady,
			Progress: in.Progress, Prefix: in.Prefix,
		})
		return err
	}); err != nil {
		return res, err
	}
	// No images means the node pulls them (a machine with registry access).
	if pre != nil {
		if err = res.Steps.Time("load-images", func() error {
			res.Images, err = pre.Finish(ctx)
			return err
		}); err != nil {
			return res, err
		}
		if err := node.RecordPreloaded(in.State, run.Resource{Kind: kind.ResourceKind, Name: in.Name}.Key(), res.Images); err != nil {
			return res, err
		}
	}
	err = res.Steps.Time("clusterctl-init", func() error {
		res.Providers, err = providers.Init(ctx, providers.InitInput{KubeconfigPath: in.KubeconfigPath, ClusterctlConfigPath: in.ClusterctlConfigPath,
			Providers: in.Providers, InitTimeout: in.Timeouts.Init.Timeout, Ready: in.Timeouts.ProvidersReady,
			Progress: in.Progress, Prefix: in.Prefix})
		return err
	})
	if res.Providers != nil {
		// Init and the provider wait are reported separately, as the CLI timings do.
		res.Steps = append(res.Steps[:len(res.Steps)-1], res.Providers.Steps()...)
	}
	return res, err
}
