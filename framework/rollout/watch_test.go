package rollout

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/wait"
)

func machine(name, pool, version string, isReady bool) *clusterv1.Machine {
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name),
		Labels: map[string]string{clusterv1.ClusterNameLabel: "wl"}}}
	if pool == ControlPlanePool {
		m.Labels[clusterv1.MachineControlPlaneLabel] = ""
	} else {
		m.Labels[clusterv1.MachineDeploymentNameLabel] = pool
	}
	m.Spec.Version = version
	m.Status.NodeRef.Name = name
	st := metav1.ConditionTrue
	if !isReady {
		st = metav1.ConditionFalse
	}
	m.Status.Conditions = []metav1.Condition{{Type: clusterv1.MachineReadyCondition, Status: st, Reason: "NodeNotReady", Message: "kubelet stopped posting"}}
	return m
}

// The injected fault: the upgrade replaces the control plane, but one
// worker stays on the old version. The watch times out naming it, its
// version and its conditions.
func TestAWorkerLeftOnTheOldVersionIsNamed(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(kube.Scheme()).WithObjects(
		machine("wl-cp-a", ControlPlanePool, "v1.32.5", true), machine("wl-md-0-a", "md-0", "v1.32.5", true)).Build()
	change := func(ctx context.Context) error {
		if err := c.Delete(ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "wl-cp-a", Namespace: "default"}}); err != nil {
			return err
		}
		return c.Create(ctx, machine("wl-cp-b", ControlPlanePool, "v1.33.1", true))
	}
	tl, err := Watch(context.Background(), WatchInput{Client: c, Cluster: "wl", Namespace: "default", What: "upgrade to v1.33.1",
		Want: Want{Pools: map[string]int{ControlPlanePool: 1, "md-0": 1}, Version: "v1.33.1"}, Change: change,
		Interval: wait.Interval{Timeout: 300 * time.Millisecond, Poll: 20 * time.Millisecond}})
	if err == nil || !strings.Contains(err.Error(), "still at v1.32.5: wl-md-0-a (md-0, v1.32.5, node wl-md-0-a)") {
		t.Fatalf("err = %v, want the worker left on v1.32.5 named", err)
	}
	if strings.Contains(err.Error(), "wl-cp-b") {
		t.Errorf("the upgraded control plane Machine is named as stuck: %v", err)
	}
	if r := tl.Replaced(); len(r) != 1 || r[0].Name != "wl-cp-a" {
		t.Errorf("replaced %v, want wl-cp-a", r)
	}
}

// A Machine that must be replaced (remediation) and is not: named with its
// conditions.
func TestAMachineNeverReplacedIsNamedWithItsConditions(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(kube.Scheme()).WithObjects(machine("wl-md-0-a", "md-0", "v1.33.1", false)).Build()
	_, err := Watch(context.Background(), WatchInput{Client: c, Cluster: "wl", Namespace: "default", What: "remediation",
		Want:     Want{Pools: map[string]int{"md-0": 1}, Gone: []string{"wl-md-0-a"}},
		Interval: wait.Interval{Timeout: 200 * time.Millisecond, Poll: 20 * time.Millisecond}})
	if err == nil || !strings.Contains(err.Error(), "not replaced: wl-md-0-a") || !strings.Contains(err.Error(), "Ready=False (NodeNotReady): kubelet stopped posting") {
		t.Fatalf("err = %v", err)
	}
}

// Settled Machines end the watch at once, and a change that creates the
// new Machines before removing the old keeps within maxSurge 1.
func TestRollingOrder(t *testing.T) {
	start := time.Now()
	tl := newTimeline(start)
	cpOld, wOld := machine("cp-a", ControlPlanePool, "v1", true), machine("w-a", "md-0", "v1", true)
	tl.observe(start, []clusterv1.Machine{*cpOld, *wOld}, true)
	cpNew := machine("cp-b", ControlPlanePool, "v2", true)
	cpNew.CreationTimestamp = metav1.NewTime(start.Add(time.Second))
	tl.observe(start.Add(2*time.Second), []clusterv1.Machine{*cpOld, *wOld, *cpNew}, false)
	tl.observe(start.Add(10*time.Second), []clusterv1.Machine{*wOld, *cpNew}, false)
	early := machine("w-b", "md-0", "v2", true)
	early.CreationTimestamp = metav1.NewTime(start.Add(3 * time.Second)) // before cp-a was gone
	tl.observe(start.Add(12*time.Second), []clusterv1.Machine{*wOld, *cpNew, *early}, false)
	err := CheckRollingOrder(tl, map[string]int{ControlPlanePool: 1, "md-0": 1}, 2*time.Second)
	if err == nil || !strings.Contains(err.Error(), "worker Machine w-b was created") {
		t.Errorf("a worker created before the control plane was done: %v", err)
	}
	surge := machine("w-c", "md-0", "v2", true)
	surge.CreationTimestamp = metav1.NewTime(start.Add(13 * time.Second))
	tl.observe(start.Add(14*time.Second), []clusterv1.Machine{*wOld, *cpNew, *early, *surge}, false)
	if err := CheckRollingOrder(tl, map[string]int{ControlPlanePool: 1, "md-0": 1}, 2*time.Second); err == nil || !strings.Contains(err.Error(), "md-0 had 3 Machines at once") {
		t.Errorf("three workers at once for one: %v", err)
	}
}

// The injected fault of scripts/test-remediation-fault.sh, as a unit: the
// Machine is not Ready, but carries the skip-remediation annotation, which
// MachineHealthChecks pass over (Cluster API's shouldSkipRemediation). The
// wait ends after its grace, not at its timeout, with that as the cause.
func TestARemediationThatCannotHappenEndsTheWaitWithItsCause(t *testing.T) {
	m := machine("wl-md-0-a", "md-0", "v1.33.1", false)
	m.Annotations = map[string]string{clusterv1.MachineSkipRemediationAnnotation: ""}
	c := fake.NewClientBuilder().WithScheme(kube.Scheme()).WithObjects(m).Build()
	start := time.Now()
	_, err := Watch(context.Background(), WatchInput{Client: c, Cluster: "wl", Namespace: "default", What: "remediation",
		Want: Want{Pools: map[string]int{"md-0": 1}, Gone: []string{"wl-md-0-a"}}, StuckIf: NotRemediated("wl-md-0-a"),
		Interval: wait.Interval{Timeout: time.Minute, Poll: 10 * time.Millisecond, Grace: 100 * time.Millisecond}})
	if err == nil || !strings.HasPrefix(err.Error(), "Machine wl-md-0-a is not Ready (Ready=False, NodeNotReady)") ||
		!strings.Contains(err.Error(), "annotated cluster.x-k8s.io/skip-remediation") || !strings.Contains(err.Error(), "not replaced: wl-md-0-a") {
		t.Fatalf("err = %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %s: the wait ran to its timeout instead of ending after the grace", took)
	}
}
