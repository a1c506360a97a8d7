package smoke

import (
	"fmt"
	"sort"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"

	"github.com/tkg-e2e/harness/framework/kube"
)

// Node is one node of the cluster and whether the smoke pods can run there.
type Node struct {
	Name        string
	Schedulable bool
	// Excluded says why a node is left out ("NotReady (...)", "cordoned",
	// "taint node-role.kubernetes.io/control-plane:NoSchedule"); empty when
	// Schedulable.
	Excluded string
}

// podTolerations are the tolerations of the servers: none, so that they
// land where an ordinary workload would. A control-plane node tainted
// NoSchedule (CAPD's, kubeadm's) gets no server.
var podTolerations []corev1.Toleration

// clientTolerations let the clients also run where ordinary workloads do not
// (a control plane tainted NoSchedule): a client there is one more node from
// which DNS, the Service and the servers must answer, and the one that makes
// traffic cross nodes on a cluster with a single worker (CAPD's default).
// Only NoSchedule: a node tainted NoExecute (or NotReady, cordoned, not
// Linux) gets no client.
var clientTolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}

// schedulableNodes says of every node whether a pod with tolerations can be
// scheduled there: Ready, not cordoned, a Linux node (the image is a Linux
// image), and every NoSchedule or NoExecute taint tolerated. The nodes come
// back sorted by name, so that a report is stable between runs.
func schedulableNodes(nodes []corev1.Node, tolerations []corev1.Toleration) []Node {
	out := make([]Node, 0, len(nodes))
	for i := range nodes {
		n := &nodes[i]
		out = append(out, Node{Name: n.Name, Excluded: excluded(n, tolerations)})
		out[len(out)-1].Schedulable = out[len(out)-1].Excluded == ""
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func excluded(n *corev1.Node, tolerations []corev1.Toleration) string {
	var why []string
	if ok, reason := kube.NodeReady(n); !ok {
		why = append(why, reason)
	}
	if n.Spec.Unschedulable {
		why = append(why, "cordoned")
	}
	if os := n.Labels[corev1.LabelOSStable]; os != "" && os != "linux" {
		why = append(why, "not a Linux node ("+corev1.LabelOSStable+"="+os+")")
	}
	for i := range n.Spec.Taints {
		t := &n.Spec.Taints[i]
		if t.Effect != corev1.TaintEffectNoSchedule && t.Effect != corev1.TaintEffectNoExecute {
			continue // PreferNoSchedule only steers the scheduler
		}
		if !tolerated(t, tolerations) {
			why = append(why, "taint "+t.ToString())
		}
	}
	return strings.Join(why, ", ")
}

func tolerated(t *corev1.Taint, tolerations []corev1.Toleration) bool {
	for i := range tolerations {
		// Comparison operators (Gt/Lt) are an alpha feature; the smoke pods
		// do not use them, so they are not enabled here.
		if tolerations[i].ToleratesTaint(logr.Discard(), t, false) {
			return true
		}
	}
	return false
}

// names returns the names of the schedulable nodes (schedulable true) or of
// the others.
func names(nodes []Node, schedulable bool) []string {
	var out []string
	for _, n := range nodes {
		if n.Schedulable == schedulable {
			out = append(out, n.Name)
		}
	}
	return out
}

// leftOut describes the nodes that are not schedulable, for messages.
func leftOut(nodes []Node) string {
	var parts []string
	for _, n := range nodes {
		if !n.Schedulable {
			parts = append(parts, fmt.Sprintf("%s: %s", n.Name, n.Excluded))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "; ")
}
