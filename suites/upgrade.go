package suites

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiclusterctl "sigs.k8s.io/cluster-api/test/framework/clusterctl"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/clusters"
	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/node"
	"github.com/tkg-e2e/harness/framework/probe"
	"github.com/tkg-e2e/harness/framework/rollout"
	"github.com/tkg-e2e/harness/framework/stages"
	"github.com/tkg-e2e/harness/framework/wait"
)

// Upgrade is the Kubernetes upgrade as `tanzu cluster upgrade` and Cluster
// API's ClusterUpgradeConformanceSpec do it: its own workload cluster
// (clusters.upgrade, ID upgrade) is made by the management cluster at the
// previous release, or a workload cluster the workload stage made at it
// (upgrade.cluster) is taken; its topology version is bumped to the release
// under test, every Machine is replaced (control plane first, one at a time)
// while the API server and a Service are probed from outside, and health,
// smoke, placement and packages run again on the upgraded cluster.
var Upgrade = Stage{
	Definition: stages.Definition{Name: "upgrade", Needs: []string{"move"}, Category: stages.Provider, DayTwo: true,
		Kinds:     []string{clusters.ResourceKind},
		Intervals: append([]string{"wait-rollout", "probe", "probe-answer"}, append(clusterIntervals, recheckIntervals...)...),
		Doc:       "a workload cluster at the previous release upgraded to the one under test: rollout order, API and Service outage, checks again"},
	Cleanup:   capiClusterCleanup,
	Preflight: upgradePreflight,
	Spec: func(ctx context.Context, env func() *Env) {
		UpgradeSpec(ctx, func() UpgradeSpecInput {
			e := env()
			in := UpgradeSpecInput{Env: e, To: e.Config.Upgrade.KubernetesVersion,
				Rollout: e.Interval("upgrade", "wait-rollout"), Probe: e.Interval("upgrade", "probe"),
				ProbeAnswer: e.Interval("upgrade", "probe-answer"), Recheck: recheckInput(e, "upgrade")}
			in.APIBound, in.ServiceBound = e.Config.Upgrade.OutageBounds()
			id, _, made := e.Config.UpgradeTarget()
			in.ID, in.Management = id, e.Cluster(RoleManagement)
			if made {
				c := clusterInput(e, "upgrade", id, RoleManagement, false)
				in.Create = &c
			}
			return in
		})
	},
}

// UpgradeSpecInput is the input of UpgradeSpec.
type UpgradeSpecInput struct {
	Env *Env
	// ID is the cluster to upgrade (config.UpgradeTarget).
	ID string
	// Create makes it, at the previous release; nil when the workload
	// stage made it (upgrade.cluster).
	Create *ClusterSpecInput
	// Management is the cluster whose Cluster API manages it.
	Management *Cluster
	// To is the version the cluster is upgraded to.
	To string
	// APIBound and ServiceBound fail the stage when the API server or the
	// probe Service were out longer in total (0: only reported).
	APIBound, ServiceBound time.Duration
	Rollout, Probe         config.Interval
	// ProbeAnswer's timeout is how long one probe poll may take to answer
	// before it counts as out.
	ProbeAnswer config.Interval
	Recheck     RecheckInput
}

func (in UpgradeSpecInput) StageOf() (*Env, string) { return in.Env, "upgrade" }

func (in UpgradeSpecInput) Validate() error {
	return InputErrors(in.Env, Unless(in.ID != "", "no clusters.upgrade and no upgrade.cluster in the profile: the upgrade stage needs a cluster to create at the previous release "+
		"(config/local.yaml has one; e.g. clusters.upgrade: {name: tkg-e2e-upg, kubernetesVersion: v1.32.5}) or a workload cluster of the run made at it (upgrade.cluster: workload-2)"),
		Unless(in.To != "", "upgrade.kubernetesVersion is empty: set the version to upgrade to"),
		Unless(in.Rollout.Timeout > 0 && in.Probe.Poll > 0 && in.ProbeAnswer.Timeout > 0,
			"intervals upgrade/wait-rollout, upgrade/probe (with a poll) and upgrade/probe-answer are required"))
}

// UpgradeSpec creates the cluster at the previous release, upgrades it with
// the outage probes running, checks the rollout's order and the outages
// against their bounds, and runs the checks again.
func UpgradeSpec(_ context.Context, inputGetter func() UpgradeSpecInput) {
	DeclareStage("upgrades a workload cluster to the release under test, within its outage bounds, and passes the checks again", inputGetter,
		func(input UpgradeSpecInput) StageFuncs {
			return StageFuncs{Run: func(ctx context.Context) error { return runUpgrade(ctx, input) },
				// A kept run's upgraded cluster is checked again by the stages
				// after it, at the version its state records.
				Reattach: func(ctx context.Context) error { return attachCluster(ctx, input.Env, input.ID) }}
		})
}

func runUpgrade(ctx context.Context, in UpgradeSpecInput) error {
	env := in.Env
	if in.Create != nil {
		steps, err := createCluster(ctx, env, *in.Create)
		StepEntries(env, "upgrade", steps)
		if err != nil {
			return err
		}
	}
	c := env.Cluster(in.ID)
	if c == nil {
		return ErrNoCluster(in.ID)
	}
	if in.Management == nil {
		return ErrNoCluster(RoleManagement)
	}
	// A kept run's cluster may be upgraded already: its state says so.
	from := env.KubernetesVersionNow(c)
	if newer, err := config.NewerVersion(in.To, from); err != nil {
		return fmt.Errorf("the %s cluster %s: %w", in.ID, c.Name, err)
	} else if !newer {
		return fmt.Errorf("the %s cluster %s is at %s already (state.json): nothing to upgrade to %s; a resumed run upgrades a cluster once", in.ID, c.Name, from, in.To)
	}
	mgmt, err := in.Management.Connect()
	if err != nil {
		return err
	}
	k, err := c.Connect()
	if err != nil {
		return err
	}
	start := time.Now()
	svc, err := probe.DeployService(ctx, probe.ServiceInput{Clientset: k.Clientset, Image: env.Config.Smoke.Image, Wait: in.Probe,
		Progress: wait.Printer{W: env.Out, Prefix: "[upgrade]"}})
	if err != nil {
		return fmt.Errorf("before the upgrade: %w", err)
	}
	StepEntries(env, "upgrade", []Step{{Name: "probe-service", Duration: time.Since(start)}})
	probes := []*probe.Running{
		probe.Start(ctx, probe.Probe{Name: "API server /readyz", Period: in.Probe.Poll, Timeout: in.ProbeAnswer.Timeout, Check: probe.Readyz(k.Clientset)}),
		probe.Start(ctx, probe.Probe{Name: "Service " + probe.ServiceName + " (NodePort, from outside)", Period: in.Probe.Poll, Timeout: in.ProbeAnswer.Timeout,
			Check: probe.HTTPAny(probe.HTTPClient, svc.URLs)}),
	}
	// The probe's objects would otherwise count in the rechecks' placement.
	defer func() { _ = svc.Delete(context.WithoutCancel(ctx)) }()

	change := func(ctx context.Context) error {
		if err := setTopologyVersion(ctx, mgmt.Client, c.Namespace, c.Name, in.To); err != nil {
			return err
		}
		// From here on the cluster should be at the new version: health
		// expects it, and a resumed run knows it.
		key := clusters.ResourceKind + "/" + c.Namespace + "/" + c.Name
		if err := env.State.SetResourceAttribute(key, AttrKubernetesVersion, in.To); err != nil {
			return err
		}
		env.Printf("[upgrade] %s: topology version %s -> %s", c.Name, from, in.To)
		return nil
	}
	tl, err := watchMachines(ctx, env, "upgrade", c, in.Management, machineWatch{Want: rollout.Want{Version: in.To}, Change: change,
		Interval: in.Rollout, What: fmt.Sprintf("every Machine of %s/%s replaced at %s", c.Namespace, c.Name, in.To),
		Images: kubeProxyImages(from, in.To)})
	results := make([]probe.Result, len(probes))
	for i, p := range probes {
		results[i] = p.Stop()
	}
	if derr := svc.Delete(ctx); derr != nil {
		env.Printf("[upgrade] deleting the probe Service: %v", derr)
	}
	report := dayTwoReport{Title: fmt.Sprintf("Upgrade of %s from %s to %s", c.Name, from, in.To), Timeline: tl, Probes: results}
	report.write(ctx, env, "upgrade")
	if err != nil {
		return err
	}
	if err := checkUpgradeRollout(tl, in.Rollout.Poll, results[0].Within(in.APIBound), results[1].Within(in.ServiceBound)); err != nil {
		return err
	}
	return recheck(ctx, in.Recheck, c)
}

// kubeProxyImages are the kube-proxy images of both versions, for the nodes
// a rollout makes (tryLoad: a machine with registry access pulls them).
// Until the control plane is done, kube-proxy's DaemonSet stays at the old
// version, which the new nodes' image lacks: without it a new node has no
// Service VIP, the kit's CNI cannot reach the API server through it, and
// the node never gets Ready (a self-hosted control plane then waits on
// itself). Once it is done, kube-proxy rolls to the new version on the old
// workers, whose image lacks that one.
func kubeProxyImages(from, to string) []capiclusterctl.ContainerImage {
	var out []capiclusterctl.ContainerImage
	for _, v := range []string{from, to} {
		out = append(out, capiclusterctl.ContainerImage{Name: "registry.k8s.io/kube-proxy:" + v, LoadBehavior: capiclusterctl.TryLoadImage})
	}
	return out
}

// setTopologyVersion bumps a ClusterClass cluster's version: the topology
// controller then upgrades the control plane, and the MachineDeployments
// once it is done.
func setTopologyVersion(ctx context.Context, c client.Client, ns, name, version string) error {
	var cl clusterv1.Cluster
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &cl); err != nil {
		return fmt.Errorf("reading Cluster %s/%s: %w", ns, name, err)
	}
	if !cl.Spec.Topology.IsDefined() {
		return fmt.Errorf("cluster %s/%s has no topology: the upgrade stage upgrades ClusterClass clusters (flavor development)", ns, name)
	}
	patch := client.MergeFrom(cl.DeepCopy())
	cl.Spec.Topology.Version = version
	if err := c.Patch(ctx, &cl, patch); err != nil {
		return fmt.Errorf("setting Cluster %s/%s's topology version to %s: %w", ns, name, version, err)
	}
	return nil
}

// upgradePreflight finds what the upgrade needs before the first cluster:
// a cluster to upgrade (one upgrade.cluster names is the workload stage's:
// that stage runs, or a kept run has it), and the node images of both
// versions on this Docker host (CAPD's nodes are containers of
// kindest/node:<version>).
func upgradePreflight(ctx context.Context, e *Env) error {
	id, u, made := e.Config.UpgradeTarget()
	if u == nil {
		return fmt.Errorf("upgrade: the profile has no clusters.upgrade, the cluster the stage creates at the previous release and upgrades, and no upgrade.cluster: " +
			"add one (config/local.yaml has an example: name, kubernetesVersion, topologyVariables) and upgrade.kubernetesVersion")
	}
	if !made {
		ss, known := reachedStages(e)
		if err := madeBeforeUpgrade(e, id, ss, known); err != nil {
			return err
		}
	}
	if !e.Config.Infrastructure().NodesAreContainers() {
		return nil
	}
	return nodeImagesPresent(ctx, "upgrade", u.KubernetesVersion, e.Config.Upgrade.KubernetesVersion)
}

// madeBeforeUpgrade: the workload cluster upgrade.cluster names exists
// when the upgrade starts, because the kept run being resumed has it or
// the workload stage runs first. make e2e FOCUS=upgrade alone would
// otherwise fail after the management cluster was made.
func madeBeforeUpgrade(e *Env, id string, ss []Stage, known bool) error {
	if r, ok := e.State.Resource(clusters.ResourceKind, id); ok && r.State != "deleted" {
		return nil
	}
	if !known || slices.ContainsFunc(ss, func(s Stage) bool { return s.Name == Workload.Name }) {
		return nil
	}
	return fmt.Errorf("upgrade: upgrade.cluster is %s (%s), which the workload stage makes, and this run does not reach it: "+
		"add workload to FOCUS (make e2e FOCUS='workload upgrade'), resume a kept run that has it (RESUME=1), or remove upgrade.cluster to let the upgrade make clusters.upgrade",
		id, config.ClusterKey(id))
}

// nodeImagesPresent finds a missing CAPD node image of an upgrade's
// versions on this Docker host, naming the script that builds it offline.
func nodeImagesPresent(ctx context.Context, stage string, versions ...string) error {
	var errs []error
	for _, v := range versions {
		if err := node.ImagePresent(ctx, "kindest/node:"+v); err != nil {
			errs = append(errs, fmt.Errorf("%s: no node image for %s: %w (offline: build it with scripts/previous-release-images.sh, PREVIOUS_KUBERNETES_VERSION=%s)", stage, v, err, v))
		}
	}
	return errors.Join(errs...)
}

// checkUpgradeRollout is what an upgrade's finished rollout must show:
// the control plane first and at most one extra Machine per pool, every
// Machine that existed replaced, and the outages (their Within results)
// inside their bounds.
func checkUpgradeRollout(tl *rollout.Timeline, poll time.Duration, outages ...error) error {
	errs := []error{rollout.CheckRollingOrder(tl, tl.Pools(), poll+2*time.Second)}
	if replaced, existed := len(tl.Replaced()), len(tl.Existing()); replaced != existed {
		errs = append(errs, fmt.Errorf("%d of the %d Machines that existed before the upgrade were replaced", replaced, existed))
	}
	return errors.Join(append(errs, outages...)...)
}
