package suites

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/health"
	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/rollout"
	"github.com/tkg-e2e/harness/framework/stages"
)

// Scale is MachineDeploymentScaleSpec on the workload cluster: its first
// MachineDeployment scaled up by one through the topology, the new node
// checked (Ready, at the cluster's version), then scaled back, and health
// run again.
var Scale = Stage{
	Definition: stages.Definition{Name: "scale", Needs: []string{"workload"}, Category: stages.Provider, DayTwo: true,
		Intervals: []string{"wait-scale", "load-images", "wait-healthy"},
		Doc:       "the workload cluster's MachineDeployment scaled up by one and back: the new node Ready at the cluster's version, health again"},
	Spec: func(ctx context.Context, env func() *Env) {
		ScaleSpec(ctx, func() ScaleSpecInput {
			e := env()
			return ScaleSpecInput{Env: e, Cluster: e.Cluster(RoleWorkload), Management: e.Cluster(RoleManagement),
				Wait: e.Interval("scale", "wait-scale"), Recheck: RecheckInput{Env: e, Stage: "scale", Checks: []Stage{Health}}}
		})
	},
}

// ScaleSpecInput is the input of ScaleSpec.
type ScaleSpecInput struct {
	Env                 *Env
	Cluster, Management *Cluster
	Wait                config.Interval
	Recheck             RecheckInput
}

func (in ScaleSpecInput) StageOf() (*Env, string) { return in.Env, "scale" }

func (in ScaleSpecInput) Validate() error {
	return InputErrors(in.Env, Unless(in.Wait.Timeout > 0, "interval scale/wait-scale is required"))
}

// ScaleSpec scales the first MachineDeployment up by one and back.
func ScaleSpec(_ context.Context, inputGetter func() ScaleSpecInput) {
	DeclareStage("scales a MachineDeployment up by one and back, the new node like the others", inputGetter, func(in ScaleSpecInput) StageFuncs {
		return StageFuncs{Run: func(ctx context.Context) error {
			rep, err := scaleUpAndBack(ctx, in, "scale")
			rep.write(ctx, in.Env, "scale")
			if err != nil {
				return err
			}
			return recheck(ctx, in.Recheck, in.Cluster)
		}}
	})
}

// scaleUpAndBack scales the cluster's first MachineDeployment up by one,
// checks the new node, and scales it back, watched under stage's name
// (the provider-upgrade stage scales its workload cluster this way too).
func scaleUpAndBack(ctx context.Context, in ScaleSpecInput, stage string) (dayTwoReport, error) {
	if in.Cluster == nil || in.Management == nil {
		return dayTwoReport{Title: "Scale: no cluster"}, ErrNoCluster(RoleWorkload)
	}
	mgmt, err := in.Management.Connect()
	if err != nil {
		return dayTwoReport{Title: "Scale of " + in.Cluster.Name}, err
	}
	pools, err := machinePools(ctx, mgmt.Client, in.Cluster)
	if err != nil {
		return dayTwoReport{Title: "Scale of " + in.Cluster.Name}, err
	}
	md, n, err := firstWorkerPool(ctx, mgmt.Client, in.Cluster)
	if err != nil {
		return dayTwoReport{Title: "Scale of " + in.Cluster.Name}, err
	}
	version := in.Env.KubernetesVersionNow(in.Cluster)
	up := cloneWith(pools, md, n+1)
	tl, err := watchMachines(ctx, in.Env, stage, in.Cluster, in.Management, machineWatch{Want: rollout.Want{Pools: up, Version: version},
		Change:   func(ctx context.Context) error { return setWorkerReplicas(ctx, mgmt.Client, in.Cluster, n+1) },
		Interval: in.Wait, What: fmt.Sprintf("%s scaled %d -> %d, every Machine Ready", md, n, n+1)})
	report := dayTwoReport{Title: fmt.Sprintf("Scale of %s's %s: %d -> %d -> %d", in.Cluster.Name, md, n, n+1, n), Timeline: tl}
	if err == nil {
		err = checkNewNodes(ctx, in.Cluster, tl, version)
	}
	if err == nil {
		var down *rollout.Timeline
		down, err = watchMachines(ctx, in.Env, stage, in.Cluster, in.Management, machineWatch{Want: rollout.Want{Pools: pools, Version: version},
			Change:   func(ctx context.Context) error { return setWorkerReplicas(ctx, mgmt.Client, in.Cluster, n) },
			Interval: in.Wait, What: fmt.Sprintf("%s scaled %d -> %d", md, n+1, n)})
		report.Timeline = mergeTimelines(tl, down)
	}
	return report, err
}

// firstWorkerPool is the cluster's first topology MachineDeployment: its
// MachineDeployment's name and replicas.
func firstWorkerPool(ctx context.Context, c client.Client, cl *Cluster) (string, int, error) {
	var mds clusterv1.MachineDeploymentList
	if err := c.List(ctx, &mds, client.InNamespace(cl.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: cl.Name}); err != nil {
		return "", 0, fmt.Errorf("listing the MachineDeployments of %s/%s: %w", cl.Namespace, cl.Name, err)
	}
	var obj clusterv1.Cluster
	if err := c.Get(ctx, client.ObjectKey{Namespace: cl.Namespace, Name: cl.Name}, &obj); err != nil {
		return "", 0, err
	}
	if len(obj.Spec.Topology.Workers.MachineDeployments) == 0 {
		return "", 0, fmt.Errorf("cluster %s/%s has no MachineDeployment in its topology to scale", cl.Namespace, cl.Name)
	}
	first := obj.Spec.Topology.Workers.MachineDeployments[0]
	for _, md := range mds.Items {
		if md.Labels[clusterv1.ClusterTopologyMachineDeploymentNameLabel] == first.Name && md.Spec.Replicas != nil {
			return md.Name, int(*md.Spec.Replicas), nil
		}
	}
	return "", 0, fmt.Errorf("no MachineDeployment of %s/%s carries topology name %s", cl.Namespace, cl.Name, first.Name)
}

// setWorkerReplicas sets the first topology MachineDeployment's replicas
// (the topology owns them: a patch on the MachineDeployment would be undone).
func setWorkerReplicas(ctx context.Context, c client.Client, cl *Cluster, n int) error {
	var obj clusterv1.Cluster
	if err := c.Get(ctx, client.ObjectKey{Namespace: cl.Namespace, Name: cl.Name}, &obj); err != nil {
		return err
	}
	patch := client.MergeFrom(obj.DeepCopy())
	r := int32(n)
	obj.Spec.Topology.Workers.MachineDeployments[0].Replicas = &r
	if err := c.Patch(ctx, &obj, patch); err != nil {
		return fmt.Errorf("setting %s/%s's worker replicas to %d: %w", cl.Namespace, cl.Name, n, err)
	}
	return nil
}

// checkNewNodes checks each new Machine's node as health checks the others:
// Ready, without pressure, at the version the cluster should have.
func checkNewNodes(ctx context.Context, c *Cluster, tl *rollout.Timeline, version string) error {
	k, err := c.Connect()
	if err != nil {
		return err
	}
	var errs []error
	for _, m := range tl.New() {
		if !m.Gone.IsZero() {
			continue
		}
		errs = append(errs, checkNode(ctx, k, m.Node, version))
	}
	return errors.Join(errs...)
}

func checkNode(ctx context.Context, k *kube.Cluster, name, version string) error {
	var n corev1.Node
	if err := k.Client.Get(ctx, client.ObjectKey{Name: name}, &n); err != nil {
		return fmt.Errorf("new node %s: %w", name, err)
	}
	if !health.SameVersion(n.Status.NodeInfo.KubeletVersion, version) {
		return fmt.Errorf("new node %s runs kubelet %s, want %s", name, n.Status.NodeInfo.KubeletVersion, version)
	}
	for _, c := range n.Status.Conditions {
		bad := (c.Type == corev1.NodeReady) != (c.Status == corev1.ConditionTrue)
		if bad {
			return fmt.Errorf("new node %s: %s=%s (%s)", name, c.Type, c.Status, c.Message)
		}
	}
	if n.Spec.Unschedulable {
		return fmt.Errorf("new node %s is cordoned", name)
	}
	return nil
}

func cloneWith(m map[string]int, k string, v int) map[string]int {
	out := map[string]int{}
	for a, b := range m {
		out[a] = b
	}
	out[k] = v
	return out
}

// mergeTimelines is one report over two watches.
func mergeTimelines(a, b *rollout.Timeline) *rollout.Timeline {
	if b == nil {
		return a
	}
	out := *a
	out.End = b.End
	seen := map[string]bool{}
	for _, m := range a.Machines {
		seen[m.UID] = true
	}
	for _, m := range b.Machines {
		if !seen[m.UID] {
			out.Machines = append(out.Machines, m)
		} else {
			for _, am := range out.Machines {
				if am.UID == m.UID && am.Gone.IsZero() {
					am.Gone = m.Gone
				}
			}
		}
	}
	return &out
}
