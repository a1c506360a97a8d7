package health

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/assert"
)

// ControlPlaneLabel marks control plane nodes (kubeadm sets it).
const ControlPlaneLabel = "node-role.kubernetes.io/control-plane"

// pressures are the node conditions that are healthy when False: any of
// them True means the kubelet evicts pods or the node has no network.
var pressures = []corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodeDiskPressure,
	corev1.NodePIDPressure, corev1.NodeNetworkUnavailable}

// nodeRows are the count row, then one row per node by name.
func nodeRows(ctx context.Context, c client.Client, e Expectation, r *Report) ([]assert.Row, error) {
	var list corev1.NodeList
	if err := c.List(ctx, &list); err != nil {
		row, err := readError("nodes", "nodes (v1)", err)
		return []assert.Row{row}, err
	}
	nodes := list.Items
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	for i := range nodes {
		if isControlPlane(&nodes[i]) {
			r.ControlPlaneNodes++
		}
	}
	r.Nodes = len(nodes)
	rows := []assert.Row{countRow(r.Nodes, r.ControlPlaneNodes, e)}
	for i := range nodes {
		rows = append(rows, judgeNode(&nodes[i], e.KubernetesVersion))
	}
	return rows, nil
}

func isControlPlane(n *corev1.Node) bool {
	_, ok := n.Labels[ControlPlaneLabel]
	return ok
}

// countRow checks the split as well as the total: a worker that joined as a
// control plane (or lost its label) is as wrong as a missing node.
func countRow(total, cp int, e Expectation) assert.Row {
	have := fmt.Sprintf("%s (%d control plane, %s)", plural(total, "node"), cp, plural(total-cp, "worker"))
	want := fmt.Sprintf("want %d + %d", e.ControlPlaneNodes, e.WorkerNodes)
	if total == e.ControlPlaneNodes+e.WorkerNodes && cp == e.ControlPlaneNodes {
		return assert.Row{Name: "nodes", Verdict: assert.OK, Detail: have}
	}
	return assert.Row{Name: "nodes", Verdict: assert.Mismatch, Detail: have + ", " + want +
		" (a missing node is one the infrastructure provider has not created or that has not joined; see the Machines of the cluster)"}
}

// judgeNode fails a node the scheduler cannot use or that runs another
// Kubernetes version than configured. The detail names every problem at
// once, since a kubelet that stopped often has more than one.
func judgeNode(n *corev1.Node, want string) assert.Row {
	role := "worker"
	if isControlPlane(n) {
		role = "control plane"
	}
	var problems []string
	ready := conditionOf(n, corev1.NodeReady)
	switch {
	case ready == nil:
		problems = append(problems, "no Ready condition yet (the kubelet has not reported its status)")
	case ready.Status != corev1.ConditionTrue:
		problems = append(problems, "not Ready: "+describe(ready))
	}
	for _, t := range pressures {
		if c := conditionOf(n, t); c != nil && c.Status == corev1.ConditionTrue {
			problems = append(problems, describe(c))
		}
	}
	if n.Spec.Unschedulable {
		problems = append(problems, "cordoned (spec.unschedulable): kubectl uncordon it unless a drain is still running")
	}
	for _, t := range n.Spec.Taints {
		// The kubelet of a cluster with an external cloud provider (CAPV's
		// template) registers the node with this taint; only the cloud
		// controller manager lifts it, once it found the node's VM and set
		// its providerID. Until then nothing without a toleration runs there.
		if t.Key == uninitializedTaint {
			problems = append(problems, fmt.Sprintf("not initialized by the cloud provider (taint %s:%s): the cloud controller manager (vSphere CPI) has not found its VM; see its pod's log in kube-system", t.Key, t.Effect))
		}
	}
	verdict := assert.NotReady
	kubelet := n.Status.NodeInfo.KubeletVersion
	if want != "" && !SameVersion(kubelet, want) {
		problems = append(problems, fmt.Sprintf("kubelet %s, want %s", assert.Or(kubelet, "unknown"), want))
		if len(problems) == 1 {
			verdict = assert.Mismatch
		}
	}
	name := "node " + n.Name
	if len(problems) > 0 {
		row := assert.Row{Name: name, Verdict: verdict, Detail: role + ": " + strings.Join(problems, "; ")}
		switch {
		case n.Spec.Unschedulable && ready != nil && ready.Status == corev1.ConditionUnknown:
			// Drained, then its kubelet stopped: the Machine went away and
			// the Node stayed, which no uncordon mends.
			row.Stuck = orphaned(n)
		case n.Spec.Unschedulable:
			// A cordon is lifted by whoever set it, not by waiting: a check
			// that runs while a drain runs is racing a change, not waiting
			// for a cluster to settle.
			row.Stuck = fmt.Sprintf("node %s is cordoned (spec.unschedulable): no new pod can be placed there; kubectl uncordon %s", n.Name, n.Name)
		}
		return row
	}
	detail := fmt.Sprintf("%s, Ready, kubelet %s", role, assert.Or(kubelet, "unknown"))
	if want == "" {
		detail += " (version not checked)"
	}
	return assert.Row{Name: name, Verdict: assert.OK, Detail: detail}
}

const uninitializedTaint = "node.cloudprovider.kubernetes.io/uninitialized"

// orphaned explains a Node that was drained and then stopped posting
// status: its Machine was deleted and the Node was not. Cluster API gives
// up deleting a Node once the Machine's nodeDeletionTimeout (default 10 s,
// counted from the Machine's deletion, so usually spent by the drain) has
// passed, and a single failed attempt, e.g. while the cluster's API is out
// during a control-plane replacement, leaves it (cluster-api#14024).
func orphaned(n *corev1.Node) string {
	m := "its Machine"
	get := ""
	if name := n.Annotations[clusterv1.MachineAnnotation]; name != "" {
		m = "its Machine " + name
		get = fmt.Sprintf("; kubectl get machine -n %s %s on the managing cluster says whether it is gone", assert.Or(n.Annotations[clusterv1.ClusterNamespaceAnnotation], "<namespace>"), name)
	}
	return fmt.Sprintf("node %s was drained (cordoned) and then its kubelet stopped posting status: %s was most likely deleted without it "+
		"(Cluster API gives up deleting the Node after the Machine's nodeDeletionTimeout, cluster-api#14024; set clusters.nodeDeletionTimeoutSeconds: 0)%s; "+
		"kubectl delete node %s removes the leftover", n.Name, m, get, n.Name)
}

func conditionOf(n *corev1.Node, t corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == t {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// describe is "Ready=Unknown (NodeStatusUnknown: Kubelet stopped posting
// node status.) since 2026-11-22T16:00:00Z": the time tells a node that
// never came up from one that went away mid-test.
func describe(c *corev1.NodeCondition) string {
	s := fmt.Sprintf("%s=%s", c.Type, c.Status)
	if c.Reason != "" || c.Message != "" {
		s += fmt.Sprintf(" (%s: %s)", assert.Or(c.Reason, "no reason"), assert.Or(assert.OneLine(c.Message), "no message"))
	}
	if !c.LastTransitionTime.IsZero() {
		s += " since " + c.LastTransitionTime.UTC().Format(time.RFC3339)
	}
	return s
}

// SameVersion compares Kubernetes versions by semver core and prerelease:
// TKG kubelets report "v1.33.1+vmware.1" for the configured "v1.33.1", and
// build metadata never tells two Kubernetes releases apart.
func SameVersion(a, b string) bool {
	norm := func(v string) string {
		v = strings.TrimPrefix(strings.TrimSpace(v), "v")
		v, _, _ = strings.Cut(v, "+")
		return v
	}
	return norm(a) != "" && norm(a) == norm(b)
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
