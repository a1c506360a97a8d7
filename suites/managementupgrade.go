package suites

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tkg-e2e/harness/framework/clusters"
	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/move"
	"github.com/tkg-e2e/harness/framework/probe"
	"github.com/tkg-e2e/harness/framework/rollout"
	"github.com/tkg-e2e/harness/framework/stages"
)

// ManagementUpgrade is the second half of `tanzu management-cluster
// upgrade`: a self-hosted management cluster upgrades its own Kubernetes
// version, its controllers running on the Machines they replace. The
// provider-upgrade stage's management cluster (at the previous release,
// its providers just upgraded) is moved into itself with `clusterctl move`
// as TKG's is, its topology version bumped, every Machine watched being
// replaced (control plane first) while its API server is probed from
// outside, and then it must still manage its workload cluster: that
// cluster's MachineDeployment goes 1 -> 2 -> 1 again, and health runs on both.
var ManagementUpgrade = Stage{
	Definition: stages.Definition{Name: "management-upgrade", Needs: []string{"provider-upgrade"}, Category: stages.Provider, DayTwo: true,
		Intervals: []string{"wait-rollout", "probe", "probe-answer", "wait-scale", "load-images", "wait-healthy"},
		Doc:       "the provider-upgrade management cluster moved into itself and upgraded to the release under test by its own controllers; it then scales its workload cluster"},
	Preflight: managementUpgradePreflight,
	// The rollout and what follows it run beside scale, remediate and upgrade.
	JoinAfter: "upgrade",
	Spec: func(ctx context.Context, env func() *Env) {
		ManagementUpgradeSpec(ctx, func() ManagementUpgradeSpecInput {
			e := env()
			const stage = "management-upgrade"
			iv := func(k string) config.Interval { return e.Interval("move", k) }
			in := ManagementUpgradeSpecInput{Env: e, To: e.Config.Upgrade.KubernetesVersion, Holder: e.Cluster(RoleManagement),
				Management: e.Cluster(config.IDProviderUpgrade), Workload: e.Cluster(config.IDProviderUpgradeWorkload),
				ClusterctlConfigPath: e.ClusterctlConfig(config.IDProviderUpgrade),
				Move: move.Timeouts{PreCheck: iv("pre-check"), SettleBefore: iv("settle-before"), Discovery: iv("discovery"),
					Move: iv("move"), PostCheck: iv("post-check"), Reconcile: iv("reconcile"), SettleAfter: iv("settle-after")},
				Rollout: e.Interval(stage, "wait-rollout"), Probe: e.Interval(stage, "probe"), ProbeAnswer: e.Interval(stage, "probe-answer"), Scale: e.Interval(stage, "wait-scale"),
				Recheck: RecheckInput{Env: e, Stage: stage, Checks: []Stage{Health}}}
			in.APIBound = e.Config.Upgrade.ManagementOutageBound()
			return in
		})
	},
}

// ManagementUpgradeSpecInput is the input of ManagementUpgradeSpec.
type ManagementUpgradeSpecInput struct {
	Env *Env
	// Management is the cluster to upgrade, Holder the cluster that holds
	// its Cluster object until it is moved into itself, Workload the
	// cluster it manages.
	Management, Holder, Workload *Cluster
	ClusterctlConfigPath         string
	To                           string
	APIBound                     time.Duration
	Move                         move.Timeouts
	Rollout, Probe, Scale        config.Interval
	// ProbeAnswer's timeout is how long one probe poll may take to answer
	// before it counts as out.
	ProbeAnswer config.Interval
	Recheck     RecheckInput
}

func (in ManagementUpgradeSpecInput) StageOf() (*Env, string) { return in.Env, "management-upgrade" }

func (in ManagementUpgradeSpecInput) Validate() error {
	return InputErrors(in.Env, Unless(in.To != "", "upgrade.kubernetesVersion is empty: set the version the management cluster upgrades itself to"),
		Unless(in.Rollout.Timeout > 0 && in.Probe.Poll > 0 && in.ProbeAnswer.Timeout > 0 && in.Scale.Timeout > 0,
			"intervals management-upgrade/wait-rollout, probe (with a poll), probe-answer and wait-scale are required"))
}

// ManagementUpgradeSpec makes the management cluster self-hosted, upgrades
// it by itself and checks it still manages its workload cluster.
func ManagementUpgradeSpec(_ context.Context, inputGetter func() ManagementUpgradeSpecInput) {
	DeclareStage("upgrades a self-hosted management cluster with its own controllers; it still manages its workload cluster", inputGetter,
		func(input ManagementUpgradeSpecInput) StageFuncs {
			return StageFuncs{Run: func(ctx context.Context) error { return runManagementUpgrade(ctx, input) }}
		})
}

func runManagementUpgrade(ctx context.Context, in ManagementUpgradeSpecInput) error {
	const stage = "management-upgrade"
	env, m, wl := in.Env, in.Management, in.Workload
	if m == nil || wl == nil {
		return ErrNoCluster(config.IDProviderUpgrade)
	}
	prefix := "[" + stage + "]"
	if r, ok := env.State.Resource(clusters.ResourceKind, m.Name); !ok || r.Attributes[clusters.AttrSelfHosted] != "true" {
		if in.Holder == nil {
			return ErrNoCluster(RoleManagement)
		}
		// TKG's management cluster holds its own Cluster object: the
		// upgrade below is then done by the controllers on the Machines
		// being replaced.
		mi := move.Input{FromKubeconfig: in.Holder.Kubeconfig, ToKubeconfig: m.Kubeconfig, Namespace: m.Namespace,
			ClusterName: m.Name, ClusterctlConfigPath: in.ClusterctlConfigPath, State: env.State, Timeouts: in.Move,
			Progress: env.Out, Prefix: prefix}
		defer env.moveWatches(&mi, in.Holder, m)()
		res, err := move.Move(ctx, mi)
		if res != nil {
			StepEntries(env, stage, prefixed("move ", res.Steps))
		}
		if err != nil {
			return fmt.Errorf("moving %s into itself: %w", m.Name, err)
		}
	}
	// The rest waits mostly on the cluster's own controllers (a replaced
	// control-plane Machine waits minutes on its pre-terminate hook), and
	// touches only the provider-upgrade clusters: scale, remediate and
	// upgrade, which act on the run's own workload clusters through the
	// run's own management cluster, run beside it.
	env.StartTail(stage, "the self-hosted rollout, the workload cluster scaled by the upgraded management cluster, and health on both",
		func(ctx context.Context) (TailResult, error) { return TailResult{}, upgradeSelfHosted(ctx, in) })
	return nil
}

// upgradeSelfHosted bumps the self-hosted management cluster's version,
// watches its own controllers replace every Machine while its API server is
// probed, and then has it scale its workload cluster.
func upgradeSelfHosted(ctx context.Context, in ManagementUpgradeSpecInput) error {
	const stage = "management-upgrade"
	env, m, wl := in.Env, in.Management, in.Workload
	prefix := "[" + stage + "]"
	key := clusters.ResourceKind + "/" + m.Namespace + "/" + m.Name
	mk, err := m.Connect()
	if err != nil {
		return err
	}
	from := env.KubernetesVersionNow(m)
	api := probe.Start(ctx, probe.Probe{Name: "API server /readyz of " + m.Name, Period: in.Probe.Poll, Timeout: in.ProbeAnswer.Timeout, Check: probe.Readyz(mk.Clientset)})
	change := func(ctx context.Context) error {
		if err := setTopologyVersion(ctx, mk.Client, m.Namespace, m.Name, in.To); err != nil {
			return err
		}
		if err := env.State.SetResourceAttribute(key, AttrKubernetesVersion, in.To); err != nil {
			return err
		}
		env.Printf("%s %s (self-hosted): topology version %s -> %s", prefix, m.Name, from, in.To)
		return nil
	}
	tl, err := watchMachines(ctx, env, stage, m, m, machineWatch{Want: rollout.Want{Version: in.To}, Change: change, Interval: in.Rollout,
		What:   fmt.Sprintf("every Machine of %s/%s replaced at %s by its own controllers", m.Namespace, m.Name, in.To),
		Images: kubeProxyImages(from, in.To)})
	outage := api.Stop()
	rep := dayTwoReport{Title: fmt.Sprintf("Self-hosted upgrade of management cluster %s from %s to %s", m.Name, from, in.To), Timeline: tl,
		Probes: []probe.Result{outage}}
	defer func() { rep.write(ctx, env, stage) }()
	if err != nil {
		return err
	}
	if err := checkUpgradeRollout(tl, in.Rollout.Poll, outage.Within(in.APIBound)); err != nil {
		return err
	}
	// Still a management cluster: its upgraded controllers, on new
	// Machines, scale the workload cluster they manage.
	scaled, err := scaleUpAndBack(ctx, ScaleSpecInput{Env: env, Cluster: wl, Management: m, Wait: in.Scale}, stage)
	rep.Notes = append(rep.Notes, scaled.Title+" by the upgraded management cluster")
	if err != nil {
		return fmt.Errorf("the upgraded management cluster scaling %s: %w", wl.Name, err)
	}
	return recheck(ctx, in.Recheck, m, wl)
}

func prefixed(p string, steps []Step) []Step {
	out := make([]Step, len(steps))
	for i, s := range steps {
		out[i] = Step{Name: p + s.Name, Duration: s.Duration}
	}
	return out
}

// managementUpgradePreflight finds, before the first cluster, a target
// that is not newer than the management cluster's version and a missing
// node image of either version.
func managementUpgradePreflight(ctx context.Context, e *Env) error {
	pu, to := e.Config.Clusters.ProviderUpgrade, e.Config.Upgrade.KubernetesVersion
	if pu == nil {
		return errors.New("management-upgrade: the profile has no clusters.providerUpgrade, the management cluster it upgrades (config/local.yaml has one)")
	}
	if newer, err := config.NewerVersion(to, pu.KubernetesVersion); err != nil || !newer {
		return fmt.Errorf("management-upgrade: upgrade.kubernetesVersion %s is not newer than clusters.providerUpgrade.kubernetesVersion %s: nothing would be upgraded "+
			"(create clusters.providerUpgrade at the previous release, e.g. v1.32.5)", to, pu.KubernetesVersion)
	}
	if !e.Config.Infrastructure().NodesAreContainers() {
		return nil
	}
	return nodeImagesPresent(ctx, "management-upgrade", pu.KubernetesVersion, to)
}
