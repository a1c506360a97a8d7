package clusters

import (
	"context"
	"errors"
	"strings"
	"sync"

	"sigs.k8s.io/cluster-api/test/framework/clusterctl"

	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/node"
	"github.com/tkg-e2e/harness/framework/providers"
	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/framework/wait"
)

// ProvisionTimeouts bound and pace Provision's waits, one config interval
// per wait. Only the waits a step that runs needs are required; LoadImages
// and ProvidersInit do not poll.
type ProvisionTimeouts struct {
	CreateTimeouts
	// LoadImages bounds loading Images into the nodes (docker provider).
	LoadImages wait.Interval
	// ProvidersInit bounds `clusterctl init` (management clusters).
	ProvidersInit wait.Interval
	// ProvidersReady bounds the wait for the provider Deployments (management clusters).
	ProvidersReady wait.Interval
	// KappControllerApply bounds applying kapp-controller's manifest.
	KappControllerApply wait.Interval
	// KappControllerAvailable bounds the wait for its Deployments.
	KappControllerAvailable wait.Interval
	// KappControllerAPIService bounds the wait for each APIService it serves.
	KappControllerAPIService wait.Interval
}

// ProvisionInput is the input of Provision.
type ProvisionInput struct {
	// CreateInput says which cluster to create and where; its Timeouts are
	// taken from ProvisionInput.Timeouts.CreateTimeouts.
	CreateInput
	// Images are loaded into the cluster's node containers when it is a CAPD
	// cluster (its nodes are containers here): a cluster without registry
	// access cannot pull providers, kapp-controller or test images. Nodes of
	// other providers pull.
	Images     []clusterctl.ContainerImage
	PullImages bool
	// Providers are installed with `clusterctl init` when Role is
	// RoleManagement, so the cluster can take over from the bootstrap cluster.
	Providers providers.Providers
	// Created, if set, runs once Create has made the cluster (it answers,
	// its Machines run), before images, providers and kapp-controller: for
	// callers that start watching it while the rest of the work runs.
	Created func(c *Cluster)
	// KappControllerManifest (path or URL); empty skips kapp-controller.
	KappControllerManifest string
	// PostAddons, if set, runs last on the new cluster (the suites install
	// their local package set); it is timed as the step post-addons.
	PostAddons func(ctx context.Context, c *kube.Cluster) error
	Timeouts   ProvisionTimeouts
}

func (in *ProvisionInput) loadsImages() bool {
	return in.Infrastructure != nil && in.Infrastructure.NodesAreContainers() && len(in.Images) > 0
}

func (in *ProvisionInput) validate() error {
	t, need := in.Timeouts, wait.Timeouts{}
	if in.loadsImages() {
		need["LoadImages"] = t.LoadImages.Timeout
	}
	if in.Role == RoleManagement {
		need["ProvidersInit"], need["ProvidersReady"] = t.ProvidersInit.Timeout, t.ProvidersReady.Timeout
	}
	if in.KappControllerManifest != "" {
		need["KappControllerApply"], need["KappControllerAvailable"] = t.KappControllerApply.Timeout, t.KappControllerAvailable.Timeout
		need["KappControllerAPIService"] = t.KappControllerAPIService.Timeout
	}
	errs := need.Missing("Timeouts.")
	if in.Role == RoleManagement && len(in.Providers.Infrastructure) == 0 {
		errs = append(errs, "Providers.Infrastructure is empty (a management cluster gets its providers with clusterctl init)")
	}
	return wait.Invalid("clusters.Provision", errs)
}

// ProvisionResult is what Provision returns.
type ProvisionResult struct {
	Cluster  *Cluster
	Machines []Machine
	// Images, when they were loaded.
	Images *node.LoadImagesResult
	// Providers, for a management cluster.
	Providers *providers.Result
	// Steps are Create's steps, then load-images, clusterctl-init,
	// providers-ready, kapp-controller (which ran beside the two before it
	// on a management cluster) and post-addons for those that ran.
	Steps wait.Steps
}

// Provision is the one path by which the harness makes a Cluster API
// cluster, management or workload: Create (with its CNI), the images into
// its nodes, `clusterctl init` for a management cluster beside kapp-controller,
// then PostAddons. Every input is checked before anything is created.
func Provision(ctx context.Context, in ProvisionInput) (*ProvisionResult, error) {
	in.CreateInput.Timeouts = in.Timeouts.CreateTimeouts
	var errs []string
	for _, err := range []error{in.CreateInput.validate(), in.validate()} {
		if err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return nil, errors.New(strings.Join(errs, "; "))
	}
	res := &ProvisionResult{}
	t := in.Timeouts
	var pre *node.Preload
	if in.loadsImages() {
		// The nodes take images while kubeadm runs in them; load-images then only tops up.
		pre = node.StartPreload(ctx, node.LoadImagesInput{ClusterName: in.Name, Images: in.Images, Pull: in.PullImages,
			Timeout: t.LoadImages.Timeout, Progress: in.Progress, Prefix: in.Prefix}, t.LoadImages.Poll)
		defer pre.Stop()
	}
	cr, err := Create(ctx, in.CreateInput)
	if cr != nil {
		res.Cluster, res.Machines, res.Steps = cr.Cluster, cr.Machines, cr.Steps
	}
	if err != nil {
		return res, err
	}
	c := res.Cluster
	if in.Created != nil {
		in.Created(c)
	}
	if pre != nil {
		if err := res.Steps.Time("load-images", func() error {
			res.Images, err = pre.Finish(ctx)
			return err
		}); err != nil {
			return res, err
		}
		if err := node.RecordPreloaded(in.State, run.Resource{Kind: ResourceKind, Namespace: in.Namespace, Name: in.Name}.Key(), res.Images); err != nil {
			return res, err
		}
	}
	// kapp-controller and the providers do not need each other: on a
	// management cluster kapp-controller installs beside clusterctl init.
	var kapp wait.Steps
	var kappErr error
	var kappDone sync.WaitGroup
	kctx, stopKapp := context.WithCancel(ctx)
	defer stopKapp()
	if in.KappControllerManifest != "" {
		kappDone.Go(func() {
			kappErr = kapp.Time("kapp-controller", func() error {
				return InstallKappController(kctx, KappControllerInput{Cluster: c.Kube, Manifest: in.KappControllerManifest,
					ClusterName: c.Name, Apply: t.KappControllerApply, Available: t.KappControllerAvailable,
					APIService: t.KappControllerAPIService, Progress: in.Progress, Prefix: in.Prefix})
			})
		})
	}
	if in.Role == RoleManagement {
		res.Providers, err = providers.Init(ctx, providers.InitInput{KubeconfigPath: c.KubeconfigPath,
			ClusterctlConfigPath: in.ClusterctlConfigPath, Providers: in.Providers, InitTimeout: t.ProvidersInit.Timeout,
			Ready: t.ProvidersReady, Progress: in.Progress, Prefix: in.Prefix})
		if res.Providers != nil {
			res.Steps = append(res.Steps, res.Providers.Steps()...)
		}
		if err != nil {
			stopKapp()
			kappDone.Wait()
			return res, err
		}
	}
	kappDone.Wait()
	res.Steps = append(res.Steps, kapp...)
	if kappErr != nil {
		return res, kappErr
	}
	if in.PostAddons != nil {
		if err := res.Steps.Time("post-addons", func() error { return in.PostAddons(ctx, c.Kube) }); err != nil {
			return res, err
		}
	}
	return res, nil
}
