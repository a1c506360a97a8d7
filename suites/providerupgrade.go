package suites

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	capiclusterctl "sigs.k8s.io/cluster-api/test/framework/clusterctl"

	"github.com/tkg-e2e/harness/framework/clusters"
	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/move"
	"github.com/tkg-e2e/harness/framework/providers"
	"github.com/tkg-e2e/harness/framework/stages"
)

// AttrProviders is the state attribute of the provider-upgrade management
// cluster: its clusterctl inventory as last seen ("core/cluster-api
// v1.14.0, ..."), so a check reads what it runs, not a log line.
const AttrProviders = "providers"

// ProviderUpgrade is Cluster API's ClusterctlUpgradeSpec: a management
// cluster of its own (clusters.providerUpgrade) is made by the run's
// management cluster with the previous Cluster API release
// (providerUpgrade.from), makes a workload cluster
// (clusters.providerUpgradeWorkload), and `clusterctl upgrade` takes it to
// the release under test (providerUpgrade.to). No Machine of the workload
// cluster may be replaced (same names and UIDs), every provider CRD must
// store only its storage version, and the upgraded controllers must still
// manage the workload cluster: its MachineDeployment is scaled 1 -> 2 -> 1.
var ProviderUpgrade = Stage{
	Definition: stages.Definition{Name: "provider-upgrade", Needs: []string{"move"}, Category: stages.Provider, DayTwo: true,
		Kinds: []string{clusters.ResourceKind},
		Intervals: append([]string{"init-providers", "wait-providers", "upgrade-providers", "machines-unchanged", "wait-scale", "wait-healthy"},
			clusterIntervals...),
		Doc: "a management cluster on the previous Cluster API release and its workload cluster; clusterctl upgrade: no Machine replaced, CRDs migrated, the workload cluster scaled 1 -> 2 -> 1"},
	Cleanup:   capiClusterCleanup,
	Preflight: providerUpgradePreflight,
	Spec: func(ctx context.Context, env func() *Env) {
		ProviderUpgradeSpec(ctx, func() ProviderUpgradeSpecInput {
			e := env()
			const stage = "provider-upgrade"
			in := ProviderUpgradeSpecInput{Env: e, To: providerVersions(e.Config.ProviderUpgrade.To),
				Upgrade: e.Interval(stage, "upgrade-providers"), Unchanged: e.Interval(stage, "machines-unchanged"),
				Reconcile: e.Interval(stage, "wait-cluster"), Scale: e.Interval(stage, "wait-scale"),
				Recheck: RecheckInput{Env: e, Stage: stage, Checks: []Stage{Health}}}
			if e.Config.Clusters.ProviderUpgrade != nil && e.Config.Clusters.ProviderUpgradeWorkload != nil {
				m := clusterInput(e, stage, config.IDProviderUpgrade, RoleManagement, true)
				from := providerVersions(e.Config.ProviderUpgrade.From)
				m.Providers = &from
				for _, img := range e.Config.ProviderUpgrade.Images {
					m.Images = append(m.Images, capiclusterctl.ContainerImage{Name: img, LoadBehavior: capiclusterctl.TryLoadImage})
				}
				w := clusterInput(e, stage, config.IDProviderUpgradeWorkload, config.IDProviderUpgrade, false)
				// What the stage checks is Cluster API's: kapp-controller and
				// the package set would add a minute and check nothing here.
				for _, c := range []*ClusterSpecInput{&m, &w} {
					c.KappControllerManifest, c.PostAddons = "", nil
				}
				in.Management, in.Workload = &m, &w
			}
			return in
		})
	},
}

// ProviderUpgradeSpecInput is the input of ProviderUpgradeSpec.
type ProviderUpgradeSpecInput struct {
	Env *Env
	// Management makes the management cluster with the providers to
	// upgrade from; Workload the workload cluster it manages (its Holder
	// is resolved when it runs: the management cluster is made first).
	Management, Workload *ClusterSpecInput
	// To are the providers' target versions.
	To providers.Providers
	// Upgrade bounds `clusterctl upgrade apply` and the providers' wait;
	// Reconcile the workload cluster reported Available after it;
	// Unchanged.Timeout how long its Machines must then stay the same.
	Upgrade, Reconcile, Unchanged, Scale config.Interval
	Recheck                              RecheckInput
}

func (in ProviderUpgradeSpecInput) StageOf() (*Env, string) { return in.Env, "provider-upgrade" }

func (in ProviderUpgradeSpecInput) Validate() error {
	return InputErrors(in.Env,
		Unless(in.Management != nil && in.Workload != nil, "no clusters.providerUpgrade and clusters.providerUpgradeWorkload in the profile: "+
			"the provider-upgrade stage makes a management cluster on the previous Cluster API release and a workload cluster from it "+
			"(config/local.yaml has both, with providerUpgrade.from and .to)"),
		Unless(len(in.To.Infrastructure) > 0 && in.To.Core != "", "providerUpgrade.to is empty: name the core and infrastructure providers' target versions"),
		Unless(in.Upgrade.Timeout > 0 && in.Unchanged.Timeout > 0 && in.Scale.Timeout > 0,
			"intervals provider-upgrade/upgrade-providers, machines-unchanged and wait-scale are required"))
}

// ProviderUpgradeSpec makes the two clusters, upgrades the management
// cluster's providers and checks what ClusterctlUpgradeSpec checks.
func ProviderUpgradeSpec(_ context.Context, inputGetter func() ProviderUpgradeSpecInput) {
	DeclareStage("upgrades a management cluster's providers with clusterctl: no Machine replaced, CRDs migrated, its workload cluster still managed", inputGetter,
		func(input ProviderUpgradeSpecInput) StageFuncs {
			return StageFuncs{Run: func(ctx context.Context) error { return runProviderUpgrade(ctx, input) },
				Reattach: func(ctx context.Context) error {
					return errors.Join(attachCluster(ctx, input.Env, config.IDProviderUpgrade), attachCluster(ctx, input.Env, config.IDProviderUpgradeWorkload))
				}}
		})
}

func runProviderUpgrade(ctx context.Context, in ProviderUpgradeSpecInput) error {
	const stage = "provider-upgrade"
	env := in.Env
	for _, c := range []*ClusterSpecInput{in.Management, in.Workload} {
		if c.Holder == nil {
			c.Holder = env.Cluster(c.HolderRole)
		}
		steps, err := createCluster(ctx, env, *c)
		StepEntries(env, stage, steps)
		if err != nil {
			return err
		}
	}
	mgmt, wl := env.Cluster(config.IDProviderUpgrade), env.Cluster(config.IDProviderUpgradeWorkload)
	if mgmt == nil || wl == nil {
		return ErrNoCluster(config.IDProviderUpgrade)
	}
	mk, err := mgmt.Connect()
	if err != nil {
		return err
	}
	before, err := clusters.Machines(ctx, mk.Client, wl.Namespace, wl.Name)
	if err != nil {
		return err
	}
	rep := dayTwoReport{Title: fmt.Sprintf("Provider upgrade of %s (managing %s)", mgmt.Name, wl.Name)}
	defer func() { rep.write(ctx, env, stage) }()

	prefix := "[" + stage + "]"
	start := time.Now()
	res, err := providers.Upgrade(ctx, providers.UpgradeInput{KubeconfigPath: mgmt.Kubeconfig, ClusterctlConfigPath: env.ClusterctlConfig(config.IDProviderUpgrade),
		To: in.To, ApplyTimeout: in.Upgrade.Timeout, Ready: in.Upgrade, Progress: env.Out, Prefix: prefix})
	if res != nil {
		StepEntries(env, stage, []Step{{Name: "clusterctl upgrade apply", Duration: res.ApplyDuration}, {Name: "providers available", Duration: res.WaitDuration}})
		rep.Notes = append(rep.Notes, fmt.Sprintf("clusterctl upgrade apply in %.1fs, providers Available %.1fs later: %s",
			res.ApplyDuration.Seconds(), res.WaitDuration.Seconds(), inventoryChange(res.Before, res.After)))
		if res.After != nil {
			key := clusters.ResourceKind + "/" + mgmt.Namespace + "/" + mgmt.Name
			if serr := env.State.SetResourceAttribute(key, AttrProviders, inventoryLine(res.After)); serr != nil {
				err = errors.Join(err, serr)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("upgrading %s's providers: %w", mgmt.Name, err)
	}
	off, err := providers.StoredVersions(ctx, mk.Client)
	if err != nil {
		return err
	}
	if len(off) > 0 {
		return fmt.Errorf("after clusterctl upgrade, %d CRD(s) still store an old version (a later release that drops it could not be installed): %s",
			len(off), strings.Join(off, "; "))
	}
	rep.Notes = append(rep.Notes, "every provider CRD stores only its storage version")

	// The upgraded controllers take over the workload cluster: they must
	// report it Available with the same Machines, and keep them, as a move does.
	si := move.SettleInput{Target: mk, Namespace: wl.Namespace, ClusterName: wl.Name, Before: before, Reconcile: in.Reconcile,
		Settle: in.Unchanged, Progress: env.Out, Prefix: prefix, Cause: "clusterctl upgrade"}
	t := time.Now()
	if _, err := move.Reconciled(ctx, si); err != nil {
		return err
	}
	if _, err := move.Unchanged(ctx, si, before); err != nil {
		return err
	}
	StepEntries(env, stage, []Step{{Name: "machines unchanged", Duration: time.Since(t)}})
	rep.Notes = append(rep.Notes, fmt.Sprintf("%s's %d Machine(s) kept their names and UIDs for %s after the upgrade: %s",
		wl.Name, len(before), in.Unchanged.Timeout, machineNames(before)))

	scaled, err := scaleUpAndBack(ctx, ScaleSpecInput{Env: env, Cluster: wl, Management: mgmt, Wait: in.Scale}, stage)
	rep.Timeline = scaled.Timeline
	rep.Notes = append(rep.Notes, scaled.Title+" by the upgraded controllers")
	if err != nil {
		return fmt.Errorf("the upgraded management cluster scaling %s: %w", wl.Name, err)
	}
	env.Printf("%s %s in %.0fs", prefix, rep.Title, time.Since(start).Seconds())
	return recheck(ctx, in.Recheck, mgmt, wl)
}

// providerUpgradePreflight finds bad input before the first cluster: no
// clusters for the stage, a clusterctl config that is not there, or a from
// or to version its repository does not have.
func providerUpgradePreflight(ctx context.Context, e *Env) error {
	cfg := e.Config
	if cfg.Clusters.ProviderUpgrade == nil {
		return errors.New("provider-upgrade: the profile has no clusters.providerUpgrade and clusters.providerUpgradeWorkload: " +
			"add them and providerUpgrade.from/.to (config/local.yaml has an example)")
	}
	path := cfg.ClusterctlConfigBase(config.IDProviderUpgrade)
	hint := " (offline: eval \"$(bash scripts/previous-capi-images.sh)\" builds the previous release and exports CAPI_PREVIOUS_CLUSTERCTL_CONFIG, " +
		"which providerUpgrade.clusterctlConfigPath reads)"
	if path != "" {
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("provider-upgrade: the clusterctl config %s: %w%s", path, err, hint)
		}
	}
	var errs []error
	for what, p := range map[string]config.ProviderVersions{"from": cfg.ProviderUpgrade.From, "to": cfg.ProviderUpgrade.To} {
		if err := providers.CheckUpgradeTargets(ctx, path, providerVersions(p)); err != nil {
			errs = append(errs, fmt.Errorf("provider-upgrade: providerUpgrade.%s: %w", what, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w%s", errors.Join(errs...), hint)
	}
	return nil
}

func providerVersions(p config.ProviderVersions) providers.Providers {
	return providers.Providers{Core: p.Core, Bootstrap: p.Bootstrap, ControlPlane: p.ControlPlane, Infrastructure: p.Infrastructure}
}

// inventoryChange is "cluster-api v1.13.0 -> v1.14.0, ..." over the
// providers of either clusterctl inventory (values "<label> <version> in
// <namespace>").
func inventoryChange(before, after map[string]string) string {
	keys := map[string]bool{}
	for k := range before {
		keys[k] = true
	}
	for k := range after {
		keys[k] = true
	}
	var out []string
	for k := range keys {
		label, from := inventoryEntry(before[k])
		l2, to := inventoryEntry(after[k])
		if label == "-" {
			label = l2
		}
		out = append(out, fmt.Sprintf("%s %s -> %s", label, from, to))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// inventoryLine is "cluster-api v1.14.0, ..." of one inventory.
func inventoryLine(inv map[string]string) string {
	var out []string
	for _, v := range inv {
		label, version := inventoryEntry(v)
		out = append(out, label+" "+version)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

func inventoryEntry(v string) (label, version string) {
	f := strings.Fields(v)
	if len(f) < 2 {
		return "-", "-"
	}
	return f[0], f[1]
}

func machineNames(ms []clusters.Machine) string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Name)
	}
	return strings.Join(out, ", ")
}
