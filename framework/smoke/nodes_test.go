package smoke

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestSchedulableNodesLeavesOutTaintedNotReadyCordonedAndNonLinux(t *testing.T) {
	notReady := readyNode("n-notready")
	notReady.Status.Conditions[0] = corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse,
		Reason: "KubeletNotReady", Message: "container runtime network not ready"}
	cordoned := readyNode("n-cordoned")
	cordoned.Spec.Unschedulable = true
	windows := readyNode("n-windows")
	windows.Labels[corev1.LabelOSStable] = "windows"
	nodes := []corev1.Node{
		readyNode("w-2"),
		readyNode("cp", controlPlaneTaint),
		readyNode("w-1", corev1.Taint{Key: "soft", Effect: corev1.TaintEffectPreferNoSchedule}),
		readyNode("n-evict", corev1.Taint{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoExecute}),
		notReady, cordoned, windows,
	}
	got := schedulableNodes(nodes, nil)
	if s := strings.Join(names(got, true), ","); s != "w-1,w-2" {
		t.Errorf("schedulable = %s, want w-1,w-2 (PreferNoSchedule does not keep pods away)", s)
	}
	want := map[string]string{
		"cp":         "taint node-role.kubernetes.io/control-plane:NoSchedule",
		"n-evict":    "taint dedicated=db:NoExecute",
		"n-notready": "NotReady (KubeletNotReady: container runtime network not ready)",
		"n-cordoned": "cordoned",
		"n-windows":  "not a Linux node (kubernetes.io/os=windows)",
	}
	for _, n := range got {
		if w, ok := want[n.Name]; ok && n.Excluded != w {
			t.Errorf("%s excluded because %q, want %q", n.Name, n.Excluded, w)
		}
	}
	for i := 1; i < len(got); i++ {
		if got[i-1].Name > got[i].Name {
			t.Fatalf("nodes not sorted: %v", got)
		}
	}
}

func TestSchedulableNodesHonoursTolerations(t *testing.T) {
	nodes := []corev1.Node{readyNode("cp", controlPlaneTaint), readyNode("gpu", corev1.Taint{Key: "gpu", Value: "yes", Effect: corev1.TaintEffectNoSchedule})}
	tol := []corev1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	got := schedulableNodes(nodes, tol)
	if s := strings.Join(names(got, true), ","); s != "cp" {
		t.Errorf("schedulable = %s, want cp (tolerated) and not gpu", s)
	}
	if lo := leftOut(got); lo != "gpu: taint gpu=yes:NoSchedule" {
		t.Errorf("leftOut = %q", lo)
	}
}

func TestSmokePodsTolerateNothing(t *testing.T) {
	// The brief of the smoke test: pods land where an ordinary workload
	// would, so a tainted control plane is not counted as schedulable.
	if len(podTolerations) != 0 {
		t.Fatalf("podTolerations = %v", podTolerations)
	}
	if got := names(schedulableNodes([]corev1.Node{readyNode("cp", controlPlaneTaint), readyNode("md-0")}, podTolerations), true); len(got) != 1 || got[0] != "md-0" {
		t.Fatalf("a CAPD cluster's schedulable nodes = %v, want [md-0]", got)
	}
}
