// Package bootstrap creates and manages the kind bootstrap cluster of a run
// (the first Cluster API management cluster, later discarded after `clusterctl
// move`), loads docker images into kind-style nodes (kind and CAPD) and
// installs Cluster API providers with the clusterctl library. Functions
// return errors and honour context cancellation; nothing here uses Gomega.
package bootstrap

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"sigs.k8s.io/cluster-api/test/framework/clusterctl"

	"github.com/tkg-e2e/harness/framework/run"
)

// Timeouts of Bootstrap's steps. They come from the config intervals.
type Timeouts struct {
	Create         time.Duration
	NodesReady     time.Duration
	LoadImages     time.Duration
	Init           time.Duration
	ProvidersReady time.Duration
	// Interval between polls of the waits.
	Interval time.Duration
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
	Providers            Providers
	State                *run.State
	// CreatedBy is the stage recorded with the resource (e.g. "bootstrap").
	CreatedBy string
	Timeouts  Timeouts
	Progress  io.Writer
	Prefix    string
}

// Result of Bootstrap.
type Result struct {
	Cluster   *KindCluster
	Images    *LoadImagesResult
	Providers *InitProvidersResult
	// Steps are the step durations in order: create, load-images, clusterctl-init, providers-ready.
	Steps []Step
}

// Step is one timed step.
type Step struct {
	Name     string
	Duration time.Duration
}

func (r *Result) String() string {
	var parts []string
	for _, s := range r.Steps {
		parts = append(parts, fmt.Sprintf("%s %s", s.Name, s.Duration.Round(100*time.Millisecond)))
	}
	return strings.Join(parts, ", ")
}

// Bootstrap creates the kind bootstrap cluster (docker socket mounted for
// CAPD), loads the images, runs `clusterctl init` with cert-manager, core,
// kubeadm bootstrap and control plane and the infrastructure providers, and
// waits for every provider Deployment to be Available.
func Bootstrap(ctx context.Context, in Input) (*Result, error) {
	if len(in.Images) == 0 {
		return nil, fmt.Errorf("bootstrap.Bootstrap: invalid input: Images is empty (the CAPD, CAPI and cert-manager images must be loaded: pass the config's images)")
	}
	res := &Result{}
	timed := func(name string, f func() error) error {
		start := time.Now()
		err := f()
		res.Steps = append(res.Steps, Step{Name: name, Duration: time.Since(start)})
		return err
	}
	var err error
	if err = timed("kind-create", func() error {
		res.Cluster, err = CreateKindCluster(ctx, CreateKindClusterInput{
			Name: in.Name, NodeImage: in.NodeImage, KubeconfigPath: in.KubeconfigPath, MountDockerSocket: true,
			State: in.State, CreatedBy: in.CreatedBy, Timeout: in.Timeouts.Create, NodesReadyTimeout: in.Timeouts.NodesReady,
			Interval: in.Timeouts.Interval, Progress: in.Progress, Prefix: in.Prefix,
		})
		return err
	}); err != nil {
		return res, err
	}
	if err = timed("load-images", func() error {
		res.Images, err = LoadImages(ctx, LoadImagesInput{ClusterName: in.Name, Images: in.Images, Pull: in.PullImages,
			Timeout: in.Timeouts.LoadImages, Progress: in.Progress, Prefix: in.Prefix})
		return err
	}); err != nil {
		return res, err
	}
	var pr *InitProvidersResult
	err = timed("clusterctl-init", func() error {
		pr, err = InitProviders(ctx, InitProvidersInput{KubeconfigPath: in.KubeconfigPath, ClusterctlConfigPath: in.ClusterctlConfigPath,
			Providers: in.Providers, InitTimeout: in.Timeouts.Init, WaitTimeout: in.Timeouts.ProvidersReady,
			Interval: in.Timeouts.Interval, Progress: in.Progress, Prefix: in.Prefix})
		return err
	})
	res.Providers = pr
	if pr != nil {
		// Report init and the provider wait separately, as the CLI timings do.
		last := &res.Steps[len(res.Steps)-1]
		last.Duration = pr.InitDuration
		res.Steps = append(res.Steps, Step{Name: "providers-ready", Duration: pr.WaitDuration})
	}
	return res, err
}
