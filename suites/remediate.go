package suites

import (
	"context"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/node"
	"github.com/tkg-e2e/harness/framework/rollout"
	"github.com/tkg-e2e/harness/framework/stages"
)

// Remediate is MachineRemediationSpec on the workload cluster: a
// MachineHealthCheck over its workers, one worker's kubelet stopped, and
// the Machine replaced within the wait, the cluster healthy again.
var Remediate = Stage{
	Definition: stages.Definition{Name: "remediate", Needs: []string{"workload"}, Category: stages.Provider, DayTwo: true,
		Intervals: []string{"wait-remediation", "unhealthy", "load-images", "wait-healthy"},
		Doc:       "a MachineHealthCheck replaces a worker whose kubelet was stopped, and health passes again"},
	Preflight: func(_ context.Context, e *Env) error {
		if !e.Config.Infrastructure().NodesAreContainers() {
			return fmt.Errorf("remediate: breaking a node is implemented for container nodes (CAPD) only; on vSphere it would power off the VM, which the harness does not do yet: leave remediate out of FOCUS")
		}
		return nil
	},
	Spec: func(ctx context.Context, env func() *Env) {
		RemediateSpec(ctx, func() RemediateSpecInput {
			e := env()
			return RemediateSpecInput{Env: e, Cluster: e.Cluster(RoleWorkload), Management: e.Cluster(RoleManagement),
				Wait: e.Interval("remediate", "wait-remediation"), Unhealthy: e.Interval("remediate", "unhealthy"),
				Break:   stopKubelet,
				Recheck: RecheckInput{Env: e, Stage: "remediate", Checks: []Stage{Health}}}
		})
	},
}

// RemediateSpecInput is the input of RemediateSpec.
type RemediateSpecInput struct {
	Env                 *Env
	Cluster, Management *Cluster
	// Wait bounds the replacement; Unhealthy's timeout is how long the
	// node must be unhealthy before the MachineHealthCheck acts.
	Wait, Unhealthy config.Interval
	// Break makes a worker's node unhealthy (stops its kubelet).
	Break   func(ctx context.Context, node string, out io.Writer) error
	Recheck RecheckInput
}

func (in RemediateSpecInput) StageOf() (*Env, string) { return in.Env, "remediate" }

func (in RemediateSpecInput) Validate() error {
	return InputErrors(in.Env, Unless(in.Wait.Timeout > 0 && in.Unhealthy.Timeout > 0, "intervals remediate/wait-remediation and remediate/unhealthy are required"),
		Unless(in.Break != nil, "Break is required"))
}

// RemediateSpec breaks one worker and waits for its MachineHealthCheck to
// replace it.
func RemediateSpec(_ context.Context, inputGetter func() RemediateSpecInput) {
	DeclareStage("replaces a worker whose kubelet stopped, through a MachineHealthCheck", inputGetter, func(in RemediateSpecInput) StageFuncs {
		return StageFuncs{Run: func(ctx context.Context) error { return runRemediate(ctx, in) }}
	})
}

func runRemediate(ctx context.Context, in RemediateSpecInput) error {
	env, c := in.Env, in.Cluster
	if c == nil || in.Management == nil {
		return ErrNoCluster(RoleWorkload)
	}
	mgmt, err := in.Management.Connect()
	if err != nil {
		return err
	}
	md, _, err := firstWorkerPool(ctx, mgmt.Client, c)
	if err != nil {
		return err
	}
	var ms clusterv1.MachineList
	if err := mgmt.Client.List(ctx, &ms, client.InNamespace(c.Namespace), client.MatchingLabels{clusterv1.MachineDeploymentNameLabel: md}); err != nil {
		return err
	}
	if len(ms.Items) == 0 || ms.Items[0].Status.NodeRef.Name == "" {
		return fmt.Errorf("MachineDeployment %s has no Machine with a node to break", md)
	}
	victim := ms.Items[0]
	mhc := machineHealthCheck(c, md, in.Unhealthy)
	if err := mgmt.Client.Create(ctx, mhc); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating MachineHealthCheck %s: %w", mhc.Name, err)
	}
	defer func() { _ = mgmt.Client.Delete(context.WithoutCancel(ctx), mhc) }()
	version := env.KubernetesVersionNow(c)
	tl, err := watchMachines(ctx, env, "remediate", c, in.Management, machineWatch{Want: rollout.Want{Version: version, Gone: []string{victim.Name}},
		Change: func(ctx context.Context) error {
			env.Printf("[remediate] stopping the kubelet of %s (Machine %s)", victim.Status.NodeRef.Name, victim.Name)
			return in.Break(ctx, victim.Status.NodeRef.Name, env.Out)
		}, Interval: in.Wait, StuckIf: rollout.NotRemediated(victim.Name),
		What: fmt.Sprintf("Machine %s (node %s, kubelet stopped) replaced by MachineHealthCheck %s", victim.Name, victim.Status.NodeRef.Name, mhc.Name)})
	dayTwoReport{Title: fmt.Sprintf("Remediation of %s's Machine %s", c.Name, victim.Name), Timeline: tl}.write(ctx, env, "remediate")
	if err != nil {
		return err
	}
	return recheck(ctx, in.Recheck, c)
}

// machineHealthCheck watches the MachineDeployment's Machines: a node
// NotReady or Unknown for the unhealthy interval's timeout is remediated.
func machineHealthCheck(c *Cluster, md string, unhealthy config.Interval) *clusterv1.MachineHealthCheck {
	secs := int32(unhealthy.Timeout.Seconds())
	return &clusterv1.MachineHealthCheck{ObjectMeta: metav1.ObjectMeta{Name: md + "-e2e", Namespace: c.Namespace},
		Spec: clusterv1.MachineHealthCheckSpec{ClusterName: c.Name,
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{clusterv1.MachineDeploymentNameLabel: md}},
			Checks: clusterv1.MachineHealthCheckChecks{UnhealthyNodeConditions: []clusterv1.UnhealthyNodeCondition{
				{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, TimeoutSeconds: &secs},
				{Type: corev1.NodeReady, Status: corev1.ConditionFalse, TimeoutSeconds: &secs}}}}}
}

// stopKubelet breaks a CAPD node the way a dead kubelet would.
func stopKubelet(ctx context.Context, name string, out io.Writer) error {
	return node.Exec(ctx, name, out, "systemctl", "stop", "kubelet")
}
