package smoke

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// unfitNodes are a NotReady node, a cordoned one and a Windows one; with
// the node controller's NoSchedule taints on the first two when
// controllerTaints.
func unfitNodes(controllerTaints bool) []corev1.Node {
	var notReadyTaints, cordonedTaints []corev1.Taint
	if controllerTaints {
		notReadyTaints = []corev1.Taint{{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}}
		cordonedTaints = []corev1.Taint{{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}}
	}
	notReady := readyNode("n-notready", notReadyTaints...)
	notReady.Status.Conditions[0] = corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse,
		Reason: "KubeletNotReady", Message: "container runtime network not ready"}
	cordoned := readyNode("n-cordoned", cordonedTaints...)
	cordoned.Spec.Unschedulable = true
	windows := readyNode("n-windows")
	windows.Labels[corev1.LabelOSStable] = "windows"
	return []corev1.Node{notReady, cordoned, windows}
}

// checkExcluded checks why nodes were left out: want's, and the reasons of
// unfitNodes.
func checkExcluded(t *testing.T, got []Node, want map[string]string) {
	t.Helper()
	want["n-notready"] = "NotReady (KubeletNotReady: container runtime network not ready)"
	want["n-cordoned"] = "cordoned"
	want["n-windows"] = "not a Linux node (kubernetes.io/os=windows)"
	for _, n := range got {
		if w, ok := want[n.Name]; ok && n.Excluded != w {
			t.Errorf("%s excluded because %q, want %q", n.Name, n.Excluded, w)
		}
	}
}

// wantSchedulable checks which of nodes pods with tol may run on (names
// joined by commas, sorted) and returns schedulableNodes' answer.
func wantSchedulable(t *testing.T, nodes []corev1.Node, tol []corev1.Toleration, want, why string) []Node {
	t.Helper()
	got := schedulableNodes(nodes, tol)
	if s := strings.Join(names(got, true), ","); s != want {
		t.Errorf("schedulable = %s, want %s (%s)", s, want, why)
	}
	return got
}

func TestSchedulableNodesLeavesOutTaintedNotReadyCordonedAndNonLinux(t *testing.T) {
	nodes := append([]corev1.Node{
		readyNode("w-2"),
		readyNode("cp", controlPlaneTaint),
		readyNode("w-1", corev1.Taint{Key: "soft", Effect: corev1.TaintEffectPreferNoSchedule}),
		readyNode("n-evict", corev1.Taint{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoExecute}),
	}, unfitNodes(false)...)
	got := wantSchedulable(t, nodes, nil, "w-1,w-2", "PreferNoSchedule does not keep pods away")
	checkExcluded(t, got, map[string]string{
		"cp":      "taint node-role.kubernetes.io/control-plane:NoSchedule",
		"n-evict": "taint dedicated=db:NoExecute",
	})
	for i := 1; i < len(got); i++ {
		if got[i-1].Name > got[i].Name {
			t.Fatalf("nodes not sorted: %v", got)
		}
	}
}

func TestSchedulableNodesHonoursTolerations(t *testing.T) {
	nodes := []corev1.Node{readyNode("cp", controlPlaneTaint), readyNode("gpu", corev1.Taint{Key: "gpu", Value: "yes", Effect: corev1.TaintEffectNoSchedule})}
	tol := []corev1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	got := wantSchedulable(t, nodes, tol, "cp", "tolerated, and not gpu")
	if lo := leftOut(got); lo != "gpu: taint gpu=yes:NoSchedule" {
		t.Errorf("leftOut = %q", lo)
	}
}

func TestSmokePodsTolerateNothing(t *testing.T) {
	// The brief of the smoke test: servers land where an ordinary workload
	// would, so a tainted control plane is not counted as schedulable (it
	// gets a client only: see TestClientsTolerateNoScheduleOnly).
	if len(podTolerations) != 0 {
		t.Fatalf("podTolerations = %v", podTolerations)
	}
	if got := names(schedulableNodes([]corev1.Node{readyNode("cp", controlPlaneTaint), readyNode("md-0")}, podTolerations), true); len(got) != 1 || got[0] != "md-0" {
		t.Fatalf("a CAPD cluster's schedulable nodes = %v, want [md-0]", got)
	}
}

func TestClientsTolerateNoScheduleOnly(t *testing.T) {
	// Every NoSchedule taint (any key), nothing else: not NoExecute, which
	// would also keep a client on a node being drained.
	if len(clientTolerations) != 1 {
		t.Fatalf("clientTolerations = %v", clientTolerations)
	}
	if tol := clientTolerations[0]; tol.Key != "" || tol.Operator != corev1.TolerationOpExists || tol.Effect != corev1.TaintEffectNoSchedule {
		t.Fatalf("client toleration = %+v, want every NoSchedule taint", tol)
	}
	// A NotReady or cordoned node carries the node controller's NoSchedule
	// taint, which the client tolerates; it gets no client all the same.
	nodes := append([]corev1.Node{
		readyNode("md-0"),
		readyNode("cp", controlPlaneTaint),
		readyNode("gpu", corev1.Taint{Key: "gpu", Value: "yes", Effect: corev1.TaintEffectNoSchedule}),
		readyNode("n-evict", corev1.Taint{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoExecute}),
		readyNode("cp-evict", controlPlaneTaint, corev1.Taint{Key: "dedicated", Value: "cp", Effect: corev1.TaintEffectNoExecute}),
	}, unfitNodes(true)...)
	got := wantSchedulable(t, nodes, clientTolerations, "cp,gpu,md-0", "the clients' nodes")
	checkExcluded(t, got, map[string]string{
		"n-evict":  "taint dedicated=db:NoExecute",
		"cp-evict": "taint dedicated=cp:NoExecute",
	})
	// The servers on the same nodes: only the untainted worker.
	wantSchedulable(t, nodes, podTolerations, "md-0", "the servers' nodes")
}

func TestClientPodToleratesNoScheduleAndServersNothing(t *testing.T) {
	pod := clientPod("ns", "client-0", "cp", "busybox:1.35.0", host, twoBackends, 20, 1)
	if tol := pod.Spec.Tolerations; len(tol) != 1 || tol[0] != clientTolerations[0] {
		t.Errorf("client pod tolerations = %+v, want %+v", tol, clientTolerations)
	}
	if !tolerated(&controlPlaneTaint, pod.Spec.Tolerations) {
		t.Error("the client pod does not tolerate the control plane's taint")
	}
	if tolerated(&corev1.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoExecute}, pod.Spec.Tolerations) {
		t.Error("the client pod tolerates a NoExecute taint")
	}
	if tol := deployment("ns", "busybox:1.35.0", 1).Spec.Template.Spec.Tolerations; len(tol) != 0 {
		t.Errorf("server pod tolerations = %+v, want none", tol)
	}
}
