package providers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	clusterctlclient "sigs.k8s.io/cluster-api/cmd/clusterctl/client"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/wait"
)

// UpgradeInput is the input of Upgrade: `clusterctl upgrade apply` to
// explicit provider versions, as Cluster API's ClusterctlUpgradeSpec does.
type UpgradeInput struct {
	KubeconfigPath       string
	ClusterctlConfigPath string
	// To are the providers with the versions to upgrade to (name:version).
	To Providers
	// ApplyTimeout bounds `clusterctl upgrade apply`; Ready the wait for
	// every provider Deployment to be Available at the new version.
	ApplyTimeout time.Duration
	Ready        wait.Interval
	Progress     io.Writer
	Prefix       string
}

// UpgradeResult says what the upgrade did.
type UpgradeResult struct {
	// Before and After are the clusterctl inventory ("infrastructure-docker"
	// -> "v1.13.0").
	Before, After map[string]string
	ApplyDuration time.Duration
	WaitDuration  time.Duration
}

// CheckUpgradeTargets finds, before anything changes, a target the
// clusterctl repository does not have: the error names the provider, the
// version and the repository's versions of it.
func CheckUpgradeTargets(ctx context.Context, configPath string, to Providers) error {
	c, err := clusterctlclient.New(ctx, configPath)
	if err != nil {
		return fmt.Errorf("clusterctl client from %q: %w", configPath, err)
	}
	var errs []error
	for _, t := range to.typed() {
		name, version, ok := strings.Cut(t.name, ":")
		if !ok || version == "" {
			errs = append(errs, fmt.Errorf("provider %s has no version: write it as %s:<version>, e.g. %s:v1.14.0", t.name, name, name))
			continue
		}
		if _, err := c.GetProviderComponents(ctx, t.name, t.typ, clusterctlclient.ComponentsOptions{SkipTemplateProcess: true}); err != nil {
			errs = append(errs, fmt.Errorf("%s (%s) is not in the clusterctl repository of %s: %w", t.name, t.typ, orDefault(configPath), err))
		}
	}
	return errors.Join(errs...)
}

func orDefault(p string) string {
	if p == "" {
		return "clusterctl's defaults"
	}
	return p
}

// Upgrade runs `clusterctl upgrade apply` with the target versions, waits
// for the providers' Deployments, and checks the inventory moved to them.
func Upgrade(ctx context.Context, in UpgradeInput) (*UpgradeResult, error) {
	if in.KubeconfigPath == "" || in.ApplyTimeout <= 0 || in.Ready.Timeout <= 0 {
		return nil, errors.New("providers.Upgrade: KubeconfigPath, ApplyTimeout and Ready.Timeout are required")
	}
	kc, err := kube.Connect(in.KubeconfigPath)
	if err != nil {
		return nil, err
	}
	res := &UpgradeResult{}
	if res.Before, err = inventory(ctx, kc); err != nil {
		return nil, err
	}
	opts := clusterctlclient.ApplyUpgradeOptions{Kubeconfig: clusterctlclient.Kubeconfig{Path: in.KubeconfigPath},
		CoreProvider: in.To.Core, BootstrapProviders: in.To.Bootstrap, ControlPlaneProviders: in.To.ControlPlane,
		InfrastructureProviders: in.To.Infrastructure, WaitProviders: true, WaitProviderTimeout: in.ApplyTimeout}
	p := wait.Printer{W: in.Progress, Prefix: in.Prefix}
	p.Printf("clusterctl upgrade apply: core %q bootstrap %v control-plane %v infrastructure %v", opts.CoreProvider,
		opts.BootstrapProviders, opts.ControlPlaneProviders, opts.InfrastructureProviders)
	start := time.Now()
	actx, cancel := context.WithTimeout(ctx, in.ApplyTimeout)
	defer cancel()
	err = kube.ClusterctlCall(actx, kube.ClusterctlLog{Out: in.Progress, Prefix: in.Prefix}, func(ctx context.Context) error {
		c, err := clusterctlclient.New(ctx, in.ClusterctlConfigPath)
		if err != nil {
			return err
		}
		return c.ApplyUpgrade(ctx, opts)
	})
	res.ApplyDuration = time.Since(start)
	if err != nil {
		return res, fmt.Errorf("clusterctl upgrade apply: %w", err)
	}
	start = time.Now()
	if err := kube.WaitDeploymentsAvailable(ctx, kube.DeploymentsInput{Cluster: kc, SelectorHasKey: ProviderLabel, MinCount: 1,
		What: "providers after the upgrade", Timeout: in.Ready.Timeout, Interval: in.Ready.Poll, Grace: in.Ready.Grace,
		Progress: in.Progress, Prefix: in.Prefix}); err != nil {
		return res, err
	}
	res.WaitDuration = time.Since(start)
	if res.After, err = inventory(ctx, kc); err != nil {
		return res, err
	}
	var off []string
	for _, t := range in.To.typed() {
		name, version, _ := strings.Cut(t.name, ":")
		if got := res.After[string(t.typ)+"/"+name]; !strings.Contains(got, version) {
			off = append(off, fmt.Sprintf("%s/%s is %q, want %s", t.typ, name, got, version))
		}
	}
	if len(off) > 0 {
		return res, fmt.Errorf("after clusterctl upgrade apply the inventory says: %s", strings.Join(off, "; "))
	}
	return res, nil
}

// StoredVersions checks every Cluster API CRD (clusterctl's label) stores
// only its storage version: clusterctl upgrade migrates the objects and
// trims status.storedVersions; an old version left there means a later
// release that drops it cannot be installed.
func StoredVersions(ctx context.Context, c client.Client) ([]string, error) {
	var crds apiextensionsv1.CustomResourceDefinitionList
	if err := c.List(ctx, &crds, client.HasLabels{ProviderLabel}); err != nil {
		return nil, fmt.Errorf("listing the providers' CRDs: %w", err)
	}
	var off []string
	for _, crd := range crds.Items {
		var storage string
		for _, v := range crd.Spec.Versions {
			if v.Storage {
				storage = v.Name
			}
		}
		if got := crd.Status.StoredVersions; !slices.Equal(got, []string{storage}) {
			off = append(off, fmt.Sprintf("%s stores %v, want only %s", crd.Name, got, storage))
		}
	}
	if len(crds.Items) == 0 {
		return nil, errors.New("no CRD carries clusterctl's label: not a management cluster?")
	}
	return off, nil
}

type typedProvider struct {
	name string
	typ  clusterctlv1.ProviderType
}

// typed lists the providers with their clusterctl type.
func (p Providers) typed() []typedProvider {
	out := []typedProvider{{p.Core, clusterctlv1.CoreProviderType}}
	for _, b := range p.Bootstrap {
		out = append(out, typedProvider{b, clusterctlv1.BootstrapProviderType})
	}
	for _, c := range p.ControlPlane {
		out = append(out, typedProvider{c, clusterctlv1.ControlPlaneProviderType})
	}
	for _, i := range p.Infrastructure {
		out = append(out, typedProvider{i, clusterctlv1.InfrastructureProviderType})
	}
	return out
}
