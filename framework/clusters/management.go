package clusters

import (
	"context"
	"fmt"
	"io"
	"time"

	"sigs.k8s.io/cluster-api/test/framework/clusterctl"

	"github.com/tkg-e2e/harness/framework/bootstrap"
)

// PrepareManagementTimeouts bound the steps of PrepareManagement.
type PrepareManagementTimeouts struct {
	LoadImages     time.Duration
	Init           time.Duration
	ProvidersReady time.Duration
	KappApply      time.Duration
	KappReady      time.Duration
	Interval       time.Duration
}

// PrepareManagementInput is the input of PrepareManagement.
type PrepareManagementInput struct {
	Cluster *Cluster
	// Images are loaded into the cluster's nodes (CAPD nodes are kind-style
	// containers labelled with the cluster name).
	Images               []clusterctl.ContainerImage
	PullImages           bool
	ClusterctlConfigPath string
	Providers            bootstrap.Providers
	// KappControllerManifest (path or URL); empty skips kapp-controller.
	KappControllerManifest string
	Timeouts               PrepareManagementTimeouts
	Progress               io.Writer
	Prefix                 string
}

// PrepareManagementResult says what PrepareManagement did.
type PrepareManagementResult struct {
	Images    *bootstrap.LoadImagesResult
	Providers *bootstrap.InitProvidersResult
	// Steps: load-images, clusterctl-init, providers-ready, kapp-controller.
	Steps []bootstrap.Step
}

// PrepareManagement turns a freshly created cluster into a management cluster
// that can take over from the bootstrap cluster: it loads the images into its
// nodes, runs `clusterctl init` with the same providers and installs
// kapp-controller.
func PrepareManagement(ctx context.Context, in PrepareManagementInput) (*PrepareManagementResult, error) {
	if in.Cluster == nil || in.Cluster.KubeconfigPath == "" {
		return nil, fmt.Errorf("clusters.PrepareManagement: invalid input: Cluster with a KubeconfigPath is required (from Create)")
	}
	res := &PrepareManagementResult{}
	start := time.Now()
	if len(in.Images) > 0 {
		var err error
		res.Images, err = bootstrap.LoadImages(ctx, bootstrap.LoadImagesInput{ClusterName: in.Cluster.Name, Images: in.Images, Pull: in.PullImages,
			Timeout: in.Timeouts.LoadImages, Progress: in.Progress, Prefix: in.Prefix})
		if err != nil {
			return res, err
		}
		res.Steps = append(res.Steps, bootstrap.Step{Name: "load-images", Duration: time.Since(start)})
	}
	pr, err := bootstrap.InitProviders(ctx, bootstrap.InitProvidersInput{KubeconfigPath: in.Cluster.KubeconfigPath,
		ClusterctlConfigPath: in.ClusterctlConfigPath, Providers: in.Providers, InitTimeout: in.Timeouts.Init,
		WaitTimeout: in.Timeouts.ProvidersReady, Interval: in.Timeouts.Interval, Progress: in.Progress, Prefix: in.Prefix})
	res.Providers = pr
	if err != nil {
		return res, err
	}
	res.Steps = append(res.Steps, bootstrap.Step{Name: "clusterctl-init", Duration: pr.InitDuration},
		bootstrap.Step{Name: "providers-ready", Duration: pr.WaitDuration})
	if in.KappControllerManifest != "" {
		start = time.Now()
		if err := InstallKappController(ctx, KappControllerInput{Cluster: in.Cluster.Kube, Manifest: in.KappControllerManifest,
			ClusterName: in.Cluster.Name, ApplyTimeout: in.Timeouts.KappApply, ReadyTimeout: in.Timeouts.KappReady,
			Interval: in.Timeouts.Interval, Progress: in.Progress, Prefix: in.Prefix}); err != nil {
			return res, err
		}
		res.Steps = append(res.Steps, bootstrap.Step{Name: "kapp-controller", Duration: time.Since(start)})
	}
	return res, nil
}
