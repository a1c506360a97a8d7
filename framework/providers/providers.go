// Package providers turns a cluster into a Cluster API management cluster:
// `clusterctl init` through the clusterctl library (resuming over what the
// clusterctl inventory already lists) and the wait for every Deployment it
// installed. The kind bootstrap cluster and a CAPD management cluster go
// through the same call, so both are initialized alike.
package providers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	clusterctlclient "sigs.k8s.io/cluster-api/cmd/clusterctl/client"

	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/wait"

	"github.com/tkg-e2e/harness/framework/infrastructure"
)

// ProviderLabel is the label clusterctl puts on everything it installs
// (providers and cert-manager).
const ProviderLabel = "clusterctl.cluster.x-k8s.io"

// Providers are clusterctl provider names, optionally name:version.
type Providers struct {
	// Core defaults to cluster-api.
	Core string
	// Bootstrap defaults to [kubeadm].
	Bootstrap []string
	// ControlPlane defaults to [kubeadm].
	ControlPlane []string
	// Infrastructure is required, e.g. [docker].
	Infrastructure []string
}

// MakesContainerNodes reports whether an infrastructure provider among them
// makes nodes that are containers on this Docker host (CAPD, with or
// without a version): its controller then needs the host's Docker socket.
func (p Providers) MakesContainerNodes() bool {
	for _, i := range p.Infrastructure {
		if infrastructure.Parse(i).NodesAreContainers() {
			return true
		}
	}
	return false
}

// WithDefaults fills the kubeadm-based defaults clusterctl uses on a first init.
func (p Providers) WithDefaults() Providers {
	if p.Core == "" {
		p.Core = "cluster-api"
	}
	if len(p.Bootstrap) == 0 {
		p.Bootstrap = []string{"kubeadm"}
	}
	if len(p.ControlPlane) == 0 {
		p.ControlPlane = []string{"kubeadm"}
	}
	return p
}

// InitInput is the input of Init.
type InitInput struct {
	// KubeconfigPath of the cluster to turn into a management cluster.
	KubeconfigPath string
	// ClusterctlConfigPath is a clusterctl config file (providers' URLs, cert-manager
	// URL, variables), e.g. the offline kit's $CLUSTERCTL_CONFIG with file:// URLs.
	// Empty means clusterctl's defaults (release URLs).
	ClusterctlConfigPath string
	Providers            Providers
	// InitTimeout bounds `clusterctl init` itself (cert-manager, then components applied).
	InitTimeout time.Duration
	// Ready bounds and paces the wait for every provider Deployment to be Available.
	Ready    wait.Interval
	Progress io.Writer
	Prefix   string
}

func (in *InitInput) validate() error {
	var errs []string
	if in.KubeconfigPath == "" {
		errs = append(errs, "KubeconfigPath is empty")
	} else if _, err := os.Stat(in.KubeconfigPath); err != nil {
		errs = append(errs, "KubeconfigPath: "+err.Error())
	}
	if in.ClusterctlConfigPath != "" {
		if _, err := os.Stat(in.ClusterctlConfigPath); err != nil {
			errs = append(errs, fmt.Sprintf("ClusterctlConfigPath: %v (point it at a clusterctl.yaml, e.g. the kit's $CLUSTERCTL_CONFIG)", err))
		}
	}
	in.Providers = in.Providers.WithDefaults()
	if len(in.Providers.Infrastructure) == 0 {
		errs = append(errs, "Providers.Infrastructure is empty (e.g. [docker])")
	}
	errs = append(errs, wait.Timeouts{"InitTimeout": in.InitTimeout, "Ready": in.Ready.Timeout}.Missing("")...)
	return wait.Invalid("providers.Init", errs)
}

// Result says what Init did.
type Result struct {
	// Installed are the providers this call installed ("infrastructure-docker v1.14.0 in capd-system").
	Installed []string
	// AlreadyInstalled were found in the clusterctl inventory and left alone (resume).
	AlreadyInstalled []string
	// Deployments waited for (namespace/name).
	Deployments  []string
	InitDuration time.Duration
	WaitDuration time.Duration
}

// Init runs `clusterctl init` through the clusterctl library (cert-manager
// from the config's URL, then the providers), skipping providers the clusterctl
// inventory already lists, and then waits for every Deployment clusterctl
// installed to be Available, with progress.
func Init(ctx context.Context, in InitInput) (*Result, error) {
	if err := in.validate(); err != nil {
		return nil, err
	}
	p := wait.Printer{W: in.Progress, Prefix: in.Prefix}
	kc, err := kube.Connect(in.KubeconfigPath)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	installed, err := inventory(ctx, kc)
	if err != nil {
		return nil, err
	}
	opts := clusterctlclient.InitOptions{Kubeconfig: clusterctlclient.Kubeconfig{Path: in.KubeconfigPath}}
	add := func(typ clusterctlv1.ProviderType, name string) []string {
		short, _, _ := strings.Cut(name, ":")
		if v, ok := installed[string(typ)+"/"+short]; ok {
			res.AlreadyInstalled = append(res.AlreadyInstalled, v)
			return nil
		}
		return []string{name}
	}
	if c := add(clusterctlv1.CoreProviderType, in.Providers.Core); len(c) > 0 {
		opts.CoreProvider = c[0]
	}
	for _, b := range in.Providers.Bootstrap {
		opts.BootstrapProviders = append(opts.BootstrapProviders, add(clusterctlv1.BootstrapProviderType, b)...)
	}
	for _, c := range in.Providers.ControlPlane {
		opts.ControlPlaneProviders = append(opts.ControlPlaneProviders, add(clusterctlv1.ControlPlaneProviderType, c)...)
	}
	for _, i := range in.Providers.Infrastructure {
		opts.InfrastructureProviders = append(opts.InfrastructureProviders, add(clusterctlv1.InfrastructureProviderType, i)...)
	}
	// clusterctl adds the kubeadm defaults by itself when the core provider is
	// missing; an already-initialized core means only the listed rest is added.
	var depNames []types.NamespacedName
	start := time.Now()
	if opts.CoreProvider != "" || len(opts.BootstrapProviders)+len(opts.ControlPlaneProviders)+len(opts.InfrastructureProviders) > 0 {
		p.Printf("clusterctl init: core %q bootstrap %v control-plane %v infrastructure %v", opts.CoreProvider,
			opts.BootstrapProviders, opts.ControlPlaneProviders, opts.InfrastructureProviders)
		ictx, cancel := context.WithTimeout(ctx, in.InitTimeout)
		defer cancel()
		var comps []clusterctlclient.Components
		err := kube.ClusterctlCall(ictx, kube.ClusterctlLog{Out: in.Progress, Prefix: in.Prefix}, func(ctx context.Context) error {
			c, err := clusterctlclient.New(ctx, in.ClusterctlConfigPath)
			if err != nil {
				return fmt.Errorf("clusterctl client from %q: %w", in.ClusterctlConfigPath, err)
			}
			comps, err = c.Init(ctx, opts)
			return err
		})
		if err != nil {
			if ctx.Err() == nil && ictx.Err() != nil {
				return nil, fmt.Errorf("clusterctl init: timed out after %s: %w", in.InitTimeout, err)
			}
			return nil, fmt.Errorf("clusterctl init: %w", err)
		}
		for _, c := range comps {
			res.Installed = append(res.Installed, fmt.Sprintf("%s %s in %s", c.ManifestLabel(), c.Version(), c.TargetNamespace()))
			for _, o := range c.Objs() {
				if o.GetKind() == "Deployment" {
					depNames = append(depNames, types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()})
				}
			}
		}
	} else {
		p.Printf("clusterctl init: every provider is already installed (%s)", strings.Join(res.AlreadyInstalled, ", "))
	}
	res.InitDuration = time.Since(start)

	start = time.Now()
	if err := kube.WaitDeploymentsAvailable(ctx, kube.DeploymentsInput{
		Cluster: kc, Names: depNames, SelectorHasKey: ProviderLabel, MinCount: len(depNames),
		What: "cert-manager and providers", Timeout: in.Ready.Timeout, Interval: in.Ready.Poll, Grace: in.Ready.Grace,
		Progress: in.Progress, Prefix: in.Prefix,
	}); err != nil {
		return res, err
	}
	res.WaitDuration = time.Since(start)
	deps, _ := providerDeployments(ctx, kc)
	res.Deployments = deps
	return res, nil
}

// inventory returns installed providers keyed "<Type>/<name>" from clusterctl's inventory.
func inventory(ctx context.Context, kc *kube.Cluster) (map[string]string, error) {
	list := clusterctlv1.ProviderList{}
	if err := kc.Client.List(ctx, &list); err != nil {
		if meta.IsNoMatchError(err) || strings.Contains(err.Error(), "the server could not find the requested resource") {
			return map[string]string{}, nil
		}
		var noKind *meta.NoKindMatchError
		if errors.As(err, &noKind) {
			return map[string]string{}, nil
		}
		return nil, fmt.Errorf("reading the clusterctl inventory: %w", err)
	}
	out := map[string]string{}
	for _, pr := range list.Items {
		out[pr.Type+"/"+pr.ProviderName] = fmt.Sprintf("%s %s in %s", pr.ManifestLabel(), pr.Version, pr.Namespace)
	}
	return out, nil
}

func providerDeployments(ctx context.Context, kc *kube.Cluster) ([]string, error) {
	deps, err := kc.Clientset.AppsV1().Deployments("").List(ctx, metav1.ListOptions{LabelSelector: ProviderLabel})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range deps.Items {
		out = append(out, d.Namespace+"/"+d.Name)
	}
	sort.Strings(out)
	return out, nil
}

// Steps are Init's timings as two steps, `clusterctl init` and the wait for
// the providers, the way every stage reports them.
func (r *Result) Steps() []wait.Step {
	return []wait.Step{{Name: "clusterctl-init", Duration: r.InitDuration}, {Name: "providers-ready", Duration: r.WaitDuration}}
}
