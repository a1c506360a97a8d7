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
	// its nodes are Ready, it is Available), while images, providers and
	// kapp-controller may still be going in: for callers that start watching
	// it while the rest of the work runs.
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
	// on a management cluster) and post-addons for those that ran. The
	// steps from load-images on started when the Machines were Running,
	// beside Create's nodes-ready and cluster-available.
	Steps wait.Steps
}

// Provision is the one path by which the harness makes a Cluster API
// cluster, management or workload: Create (with its CNI), the images into
// its nodes, `clusterctl init` for a management cluster beside kapp-controller
// (these three from the moment its Machines run, beside the rest of Create),
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
	var pre *node.Preload
	if in.loadsImages() {
		// The nodes take images while kubeadm runs in them; load-images then only tops up.
		pre = node.StartPreload(ctx, node.LoadImagesInput{ClusterName: in.Name, Images: in.Images, Pull: in.PullImages,
			Timeout: in.Timeouts.LoadImages.Timeout, Progress: in.Progress, Prefix: in.Prefix}, in.Timeouts.LoadImages.Poll)
		defer pre.Stop()
	}
	var addonSteps wait.Steps
	create := func(ctx context.Context, running func(*Cluster)) (*Cluster, error) {
		cin := in.CreateInput
		cin.Running = running
		cr, err := Create(ctx, cin)
		if cr != nil {
			res.Cluster, res.Machines, res.Steps = cr.Cluster, cr.Machines, cr.Steps
		}
		if err == nil && in.Created != nil {
			in.Created(res.Cluster)
		}
		return res.Cluster, err
	}
	err := alongside(ctx, create, func(ctx context.Context, c *Cluster) error {
		return provisionAddons(ctx, in, c, pre, res, &addonSteps)
	})
	res.Steps = append(res.Steps, addonSteps...)
	if err != nil {
		return res, err
	}
	if in.PostAddons != nil {
		if err := res.Steps.Time("post-addons", func() error { return in.PostAddons(ctx, res.Cluster.Kube) }); err != nil {
			return res, err
		}
	}
	return res, nil
}

// alongside runs create and, from the moment create calls running (every
// Machine Running with a node), addons beside the rest of it (the waits for
// Ready nodes and the Cluster's Available): the images, providers and
// kapp-controller a cluster gets need its node containers and its API, not
// its Ready nodes, and their pods start as soon as a node is Ready. A
// workload cluster's kapp-controller (3.5-9.2 s) now ends inside its 8-10 s
// of nodes-ready and cluster-available; a management cluster gains little,
// since clusterctl init waits for the worker's images either way and the
// top-up takes what nodes-ready had hidden (2026-12-02). If create never
// calls running, addons run after it. A failure of either stops the other;
// the error is the one that failed first (create stopped because addons
// failed reports addons' error, not its own cancellation).
func alongside(ctx context.Context, create func(ctx context.Context, running func(*Cluster)) (*Cluster, error),
	addons func(ctx context.Context, c *Cluster) error) error {
	cctx, stopCreate := context.WithCancel(ctx)
	defer stopCreate()
	actx, stopAddons := context.WithCancel(ctx)
	defer stopAddons()
	var addonsErr error
	addonsFailedFirst := false // read only after done
	done := make(chan struct{})
	var once sync.Once
	started := false
	running := func(c *Cluster) {
		once.Do(func() {
			started = true
			go func() {
				defer close(done)
				if addonsErr = addons(actx, c); addonsErr != nil && actx.Err() == nil {
					addonsFailedFirst = true
					stopCreate()
				}
			}()
		})
	}
	c, createErr := create(cctx, running)
	once.Do(func() {}) // running after create returned starts nothing
	if !started {
		if createErr != nil {
			return createErr
		}
		return addons(ctx, c)
	}
	if createErr != nil {
		// The add-ons may still be running: they stop, and whichever failed first is the verdict.
		stopAddons()
	}
	<-done
	if createErr != nil {
		if addonsFailedFirst {
			return addonsErr
		}
		return createErr
	}
	return addonsErr
}

// provisionAddons gives a made cluster its images (the preload's top-up), then
// `clusterctl init` for a management cluster beside kapp-controller,
// recording their steps in steps and their results in res.
func provisionAddons(ctx context.Context, in ProvisionInput, c *Cluster, pre *node.Preload, res *ProvisionResult, steps *wait.Steps) error {
	t := in.Timeouts
	if pre != nil {
		if err := steps.Time("load-images", func() (err error) {
			res.Images, err = pre.Finish(ctx)
			return err
		}); err != nil {
			return err
		}
		if err := node.RecordPreloaded(in.State, run.Resource{Kind: ResourceKind, Namespace: in.Namespace, Name: in.Name}.Key(), res.Images); err != nil {
			return err
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
		var err error
		res.Providers, err = providers.Init(ctx, providers.InitInput{KubeconfigPath: c.KubeconfigPath,
			ClusterctlConfigPath: in.ClusterctlConfigPath, Providers: in.Providers, InitTimeout: t.ProvidersInit.Timeout,
			Ready: t.ProvidersReady, Progress: in.Progress, Prefix: in.Prefix})
		if res.Providers != nil {
			*steps = append(*steps, res.Providers.Steps()...)
		}
		if err != nil {
			stopKapp()
			kappDone.Wait()
			return err
		}
	}
	kappDone.Wait()
	*steps = append(*steps, kapp...)
	return kappErr
}
