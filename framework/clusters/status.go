package clusters

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Machine is what the lifecycle checks need to know about a Machine.
type Machine struct {
	Name       string
	UID        string
	Phase      string
	NodeName   string
	ProviderID string
	// ControlPlane is true for control plane machines.
	ControlPlane bool
	// Problem is the message of its first false condition, if any.
	Problem string
	// BootstrapReady: its bootstrap data exists (a worker's needs the
	// control plane's API first). Provisioned: the infrastructure provider
	// reports its VM or container provisioned. Addresses as reported.
	BootstrapReady, Provisioned bool
	Addresses                   []string
}

// Machines lists the Machines of a Cluster, sorted by name.
func Machines(ctx context.Context, c client.Client, namespace, cluster string) ([]Machine, error) {
	list := clusterv1.MachineList{}
	if err := c.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: cluster}); err != nil {
		return nil, fmt.Errorf("listing Machines of %s/%s: %w", namespace, cluster, err)
	}
	out := make([]Machine, 0, len(list.Items))
	for _, m := range list.Items {
		_, cp := m.Labels[clusterv1.MachineControlPlaneLabel]
		var addrs []string
		for _, a := range m.Status.Addresses {
			addrs = append(addrs, a.Address)
		}
		out = append(out, Machine{Name: m.Name, UID: string(m.UID), Phase: m.Status.Phase, NodeName: m.Status.NodeRef.Name,
			ProviderID: m.Spec.ProviderID, ControlPlane: cp, Problem: firstFalse(m.Status.Conditions),
			BootstrapReady: m.Spec.Bootstrap.DataSecretName != nil,
			Provisioned:    m.Status.Initialization.InfrastructureProvisioned != nil && *m.Status.Initialization.InfrastructureProvisioned,
			Addresses:      addrs})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// MachinesSummary returns how many machines are Running with a NodeRef and a
// state line such as "1/2 machines Running with a node: mgmt-md-0-x Provisioning".
func MachinesSummary(ms []Machine, want int) (ok int, state string) {
	var bad []string
	for _, m := range ms {
		if m.Phase == string(clusterv1.MachinePhaseRunning) && m.NodeName != "" {
			ok++
			continue
		}
		s := m.Name + " " + orDash(m.Phase)
		if m.Phase == string(clusterv1.MachinePhaseRunning) {
			s += " (no nodeRef yet)"
		}
		if m.Problem != "" {
			s += " (" + m.Problem + ")"
		}
		bad = append(bad, s)
	}
	total := max(want, len(ms))
	state = fmt.Sprintf("%d/%d machines Running with a node", ok, total)
	if len(ms) < want {
		state += fmt.Sprintf(", %d of %d machines exist", len(ms), want)
	}
	if len(bad) > 0 {
		state += ": " + strings.Join(bad, ", ")
	}
	return ok, state
}

// ClusterState is a one-line description of a Cluster for progress lines.
func ClusterState(c *clusterv1.Cluster) string {
	s := "phase " + orDash(c.Status.Phase)
	if c.Spec.Paused != nil && *c.Spec.Paused {
		s += ", paused"
	}
	for _, t := range []string{clusterv1.ClusterControlPlaneInitializedCondition, clusterv1.AvailableCondition} {
		if cond := meta.FindStatusCondition(c.Status.Conditions, t); cond != nil {
			s += fmt.Sprintf(", %s=%s", t, cond.Status)
			if cond.Status != metav1.ConditionTrue && cond.Message != "" {
				s += " (" + oneLine(cond.Message, 160) + ")"
			}
		}
	}
	return s
}

// ControlPlaneInitialized reports the Cluster's control plane initialized flag.
func ControlPlaneInitialized(c *clusterv1.Cluster) bool {
	return c.Status.Initialization.ControlPlaneInitialized != nil && *c.Status.Initialization.ControlPlaneInitialized
}

// Available reports the Cluster's Available condition.
func Available(c *clusterv1.Cluster) bool {
	return meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1.AvailableCondition)
}

func firstFalse(conds []metav1.Condition) string {
	for _, c := range conds {
		if c.Status == metav1.ConditionFalse && c.Message != "" && c.Type != "Deleting" && c.Type != "Paused" {
			return c.Type + ": " + oneLine(c.Message, 120)
		}
	}
	return ""
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
