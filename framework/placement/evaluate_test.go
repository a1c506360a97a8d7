package placement

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tkg-e2e/harness/framework/assert"
)

const evalMatrix = `
name: eval
roles: [management, workload]
defaults:
  readiness: {maxRestarts: 3}
components:
- name: kube-apiserver
  namespace: kube-system
  match: {staticPod: kube-apiserver}
  roles: {management: controlPlaneOnly, workload: controlPlaneOnly}
- name: kube-proxy
  namespace: kube-system
  match: {daemonSet: kube-proxy}
  roles: {management: must, workload: must}
- name: kapp-controller
  namespaces: [kapp-controller, tkg-system]
  match: {deployment: kapp-controller}
  roles: {management: must, workload: must}
- name: capi-controller-manager
  namespace: capi-system
  match: {deployment: capi-controller-manager}
  roles: {management: must, workload: mustNot}
- name: cert-manager
  namespace: cert-manager
  match: {deployment: cert-manager}
  roles: {management: must, workload: mustNot}
- name: metrics-server
  namespace: kube-system
  match: {deployment: metrics-server}
  roles: {management: optional, workload: optional}
- name: register-placeholder
  namespace: vmware-system-antrea
  match: {namePrefix: register-placeholder}
  roles: {management: optional, workload: optional}
`

func mustParse(t *testing.T, y string) *Matrix {
	t.Helper()
	m, err := Parse([]byte(y), "eval.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func healthyWorkload() Snapshot {
	return Snapshot{
		Nodes: []corev1.Node{node("cp-0", true), node("md-0", false)},
		Pods: []corev1.Pod{
			staticPod("kube-apiserver", "cp-0"),
			dsPod("kube-system", "kube-proxy", "abcde", "cp-0"),
			dsPod("kube-system", "kube-proxy", "fghij", "md-0"),
			deployPod("tkg-system", "kapp-controller", "64c8bdfc86", "lcq2p", "md-0"),
		},
	}
}

func result(t *testing.T, r *Report, component string) Result {
	t.Helper()
	for _, res := range r.Results {
		if res.Component == component {
			return res
		}
	}
	t.Fatalf("no result for %s", component)
	return Result{}
}

// evalWorkload evaluates the healthy workload snapshot after change.
func evalWorkload(t *testing.T, change func(*Snapshot)) *Report {
	t.Helper()
	snap := healthyWorkload()
	change(&snap)
	r, err := Evaluate(mustParse(t, evalMatrix), assert.Workload, "wl", snap)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestEvaluateHealthy(t *testing.T) {
	m := mustParse(t, evalMatrix)
	r, err := Evaluate(m, assert.Workload, "wl", healthyWorkload())
	if err != nil {
		t.Fatal(err)
	}
	if r.Failed() {
		t.Fatalf("healthy workload failed: %s\n%s", r.Summary(), Markdown(m, r))
	}
	want := map[string]assert.Verdict{
		"kube-apiserver": assert.OK, "kube-proxy": assert.OK, "kapp-controller": assert.OK,
		"capi-controller-manager": assert.Absent, "cert-manager": assert.Absent,
		"metrics-server": assert.Absent, "register-placeholder": assert.Absent,
	}
	for c, v := range want {
		if got := result(t, r, c).Verdict; got != v {
			t.Errorf("%s: verdict %q, want %q", c, got, v)
		}
	}
	if r.Pods != 4 || r.Nodes != 2 {
		t.Errorf("counted %d pods on %d nodes, want 4 on 2", r.Pods, r.Nodes)
	}
}

func TestEvaluateManagementOnlyOnWorkloadIsUnexpected(t *testing.T) {
	m := mustParse(t, evalMatrix)
	snap := healthyWorkload()
	snap.Pods = append(snap.Pods, deployPod("capi-system", "capi-controller-manager", "8778fdfcb", "srm6n", "md-0"))
	r, _ := Evaluate(m, assert.Workload, "wl", snap)
	res := result(t, r, "capi-controller-manager")
	if res.Verdict != assert.Unexpected || !r.Failed() {
		t.Fatalf("verdict %q, want unexpected", res.Verdict)
	}
	if len(res.Pods) != 1 || !strings.Contains(res.Pods[0].Problems[0], "node md-0 (worker)") {
		t.Errorf("the report must name the node the pod runs on: %+v", res.Pods)
	}
	// The same pod is fine on a management cluster.
	r, _ = Evaluate(m, assert.Management, "mgmt", snap)
	if v := result(t, r, "capi-controller-manager").Verdict; v != assert.OK {
		t.Errorf("on management: %q, want ok", v)
	}
}

func TestEvaluateMissing(t *testing.T) {
	m := mustParse(t, evalMatrix)
	r, _ := Evaluate(m, assert.Management, "mgmt", healthyWorkload())
	res := result(t, r, "capi-controller-manager")
	if res.Verdict != assert.Missing {
		t.Fatalf("verdict %q, want missing", res.Verdict)
	}
	if !strings.Contains(res.Detail, "capi-system") || !strings.Contains(res.Detail, "Deployment capi-controller-manager") {
		t.Errorf("detail should say where it was looked for: %q", res.Detail)
	}
}

func TestEvaluateCrashLoopIsNotReady(t *testing.T) {
	r := evalWorkload(t, func(s *Snapshot) {
		s.Pods[3] = deployPod("tkg-system", "kapp-controller", "64c8bdfc86", "lcq2p", "md-0", crashLooping(2))
	})
	res := result(t, r, "kapp-controller")
	if res.Verdict != assert.NotReady {
		t.Fatalf("verdict %q, want not ready", res.Verdict)
	}
	p := res.Pods[0]
	if p.Ready || p.Restarts != 2 || !strings.Contains(p.Reason, "CrashLoopBackOff") || !strings.Contains(p.Reason, "Error, code 1") {
		t.Errorf("pod state lacks the crashloop facts: %+v", p)
	}
	if strings.Join(p.Problems, ";") != "not Ready" || p.Phase != "Running" {
		t.Errorf("problems: %v", p.Problems)
	}
}

func TestEvaluateRestartBudget(t *testing.T) {
	r := evalWorkload(t, func(s *Snapshot) {
		s.Pods[1] = dsPod("kube-system", "kube-proxy", "abcde", "cp-0", restarted(4))
	})
	res := result(t, r, "kube-proxy")
	if res.Verdict != assert.NotReady || !strings.Contains(res.Pods[0].Problems[0], "4 restarts, budget 3") {
		t.Fatalf("want restart budget violation, got %q %+v", res.Verdict, res.Pods)
	}
	if res.Detail != "1/2 pod(s) failing readiness" {
		t.Errorf("detail %q", res.Detail)
	}
}

func TestEvaluateControlPlaneOnly(t *testing.T) {
	r := evalWorkload(t, func(s *Snapshot) {
		s.Pods = append(s.Pods, staticPod("kube-apiserver", "md-0"))
	})
	res := result(t, r, "kube-apiserver")
	if res.Verdict != assert.Unexpected || !strings.Contains(res.Detail, "1/2 pod(s) off the control plane") {
		t.Fatalf("got %q %q", res.Verdict, res.Detail)
	}
}

// One change to the healthy workload snapshot, one row's verdict.
func TestEvaluateRowVerdicts(t *testing.T) {
	for _, c := range []struct {
		name, row string
		change    func(*Snapshot)
		want      assert.Verdict
	}{
		// Owner matching must not confuse cert-manager with
		// cert-manager-cainjector, which a name prefix would.
		{"a deployment matches by exact name", "cert-manager", func(s *Snapshot) {
			s.Pods = append(s.Pods, deployPod("cert-manager", "cert-manager-cainjector", "6cc99f4f85", "tqfc9", "md-0"))
		}, assert.Absent},
		{"a plain pod named like a static pod is not one", "kube-apiserver", func(s *Snapshot) {
			s.Pods[0] = basePod("kube-system", "kube-apiserver-cp-0", "cp-0")
		}, assert.Missing},
		{"every listed namespace is accepted", "kapp-controller", func(s *Snapshot) {
			s.Pods[3] = deployPod("kapp-controller", "kapp-controller", "5f5d9c8b7", "abcde", "md-0")
		}, assert.OK},
		{"optional but crashlooping", "metrics-server", func(s *Snapshot) {
			s.Pods = append(s.Pods, deployPod("kube-system", "metrics-server", "6ff66f4589", "v2lrl", "md-0", crashLooping(1)))
		}, assert.NotReady},
		{"optional, present by name prefix", "register-placeholder", func(s *Snapshot) {
			s.Pods = append(s.Pods, basePod("vmware-system-antrea", "register-placeholder-x1", "md-0"))
		}, assert.OK},
	} {
		if v := result(t, evalWorkload(t, c.change), c.row).Verdict; v != c.want {
			t.Errorf("%s: row %s is %q, want %q", c.name, c.row, v, c.want)
		}
	}
}

// A pod in a matrix namespace that matches no row is listed, not dropped.
func TestEvaluateListsUnmatchedPods(t *testing.T) {
	r := evalWorkload(t, func(s *Snapshot) {
		s.Pods = append(s.Pods, deployPod("cert-manager", "cert-manager-cainjector", "6cc99f4f85", "tqfc9", "md-0"))
	})
	if len(r.Unmatched) != 1 || r.Unmatched[0].Name != "cert-manager-cainjector-6cc99f4f85-tqfc9" {
		t.Errorf("want the cainjector pod listed as unmatched: %+v", r.Unmatched)
	}
}

func TestEvaluateIgnoresTerminatingAndCompletedPods(t *testing.T) {
	r := evalWorkload(t, func(s *Snapshot) {
		done := deployPod("capi-system", "capi-controller-manager", "1", "a", "md-0")
		done.Status.Phase = corev1.PodSucceeded
		s.Pods = append(s.Pods,
			deployPod("capi-system", "capi-controller-manager", "8778fdfcb", "srm6n", "md-0", terminating()), done,
			deployPod("tkg-system", "kapp-controller", "old", "zzzzz", "md-0", crashLooping(9), terminating()))
	})
	if r.Failed() {
		t.Errorf("terminating/completed pods were evaluated: %s", r.Summary())
	}
}

func TestEvaluateUnscheduledPod(t *testing.T) {
	r := evalWorkload(t, func(s *Snapshot) {
		p := deployPod("tkg-system", "kapp-controller", "64c8bdfc86", "lcq2p", "")
		p.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
			Message: "0/2 nodes are available: 2 node(s) had untolerated taint"}}}
		s.Pods[3] = p
	})
	res := result(t, r, "kapp-controller")
	if res.Verdict != assert.NotReady || res.Pods[0].Reason != "Unschedulable" || !strings.Contains(res.Pods[0].Message, "untolerated taint") {
		t.Errorf("got %q %+v", res.Verdict, res.Pods)
	}
}

func TestEvaluateUnknownRole(t *testing.T) {
	m := mustParse(t, evalMatrix)
	_, err := Evaluate(m, assert.WindowsWorkload, "w", Snapshot{})
	if err == nil || !strings.Contains(err.Error(), `no column for role "windows-workload"`) {
		t.Fatalf("err = %v", err)
	}
}

// Between two crashes a container without a readiness probe is ready for a
// moment: a pod whose container runs since less than crashSettle after a
// failed exit is not ready yet; once it has run that long, it is.
func TestPodJustRestartedAfterAFailureIsNotReadyYet(t *testing.T) {
	pod := func(startedAgo time.Duration, lastExit int32) *corev1.Pod {
		cs := corev1.ContainerStatus{Name: "c", Ready: true, RestartCount: 1,
			State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(time.Now().Add(-startedAgo))}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: lastExit, Reason: "Error"}}}
		return &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{cs},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
	}
	if ps := podState(pod(2*time.Second, 3), nil); ps.Ready || !strings.Contains(ps.Reason, "code 3") {
		t.Errorf("running 2s after exit code 3: ready %v, reason %q; want not ready, the exit named", ps.Ready, ps.Reason)
	}
	if ps := podState(pod(crashSettle+time.Second, 3), nil); !ps.Ready {
		t.Errorf("running %s after exit code 3: not ready (%q); want ready", crashSettle+time.Second, ps.Reason)
	}
	if ps := podState(pod(2*time.Second, 0), nil); !ps.Ready {
		t.Errorf("running 2s after a clean exit: not ready (%q); want ready", ps.Reason)
	}
}

// A required pod whose image cannot come is stuck: the row carries the
// kubelet's words, so the wait ends after its grace; a crash loop may still
// recover and is not.
func TestEvaluateRequiredPodWithoutItsImageIsStuck(t *testing.T) {
	r := evalWorkload(t, func(s *Snapshot) {
		s.Pods[3] = deployPod("tkg-system", "kapp-controller", "64c8bdfc86", "lcq2p", "md-0", func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodPending
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady"}}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "manager", Image: "kapp:v0",
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImageNeverPull",
					Message: `Container image "kapp:v0" is not present with pull policy of Never`}}}}
		})
	})
	cause := assert.StuckCause(r.Rows())
	if !strings.HasPrefix(cause, `ErrImageNeverPull: Container image "kapp:v0" is not present`) || !strings.HasSuffix(cause, "placement row kapp-controller") {
		t.Errorf("StuckCause = %q", cause)
	}
	r = evalWorkload(t, func(s *Snapshot) {
		s.Pods[3] = deployPod("tkg-system", "kapp-controller", "64c8bdfc86", "lcq2p", "md-0", crashLooping(2))
	})
	if !r.Failed() || assert.StuckCause(r.Rows()) != "" {
		t.Errorf("a crash loop fails but may still heal: failed=%v stuck=%q", r.Failed(), assert.StuckCause(r.Rows()))
	}
}

// A pod bound to a node that no longer exists (a deleted Machine's) runs
// nowhere: it is left out and counted, not judged failing readiness until
// the pod garbage collector deletes it; the same pod on a node that exists
// still fails.
func TestPodsOfGoneNodesAreLeftOut(t *testing.T) {
	onGone := evalWorkload(t, func(s *Snapshot) {
		s.Pods = append(s.Pods, dsPod("kube-system", "kube-proxy", "zzzzz", "md-old", crashLooping(9)))
	})
	if devs := onGone.Deviations(); len(devs) != 0 {
		t.Errorf("a pod of a gone node was judged: %v", devs)
	}
	if len(onGone.OnGoneNodes) != 1 || onGone.OnGoneNodes[0].Node != "md-old" || !strings.Contains(onGone.Summary(), "1 pod(s) of nodes that are gone left out") {
		t.Errorf("OnGoneNodes %v, summary %q", onGone.OnGoneNodes, onGone.Summary())
	}
	onLive := evalWorkload(t, func(s *Snapshot) {
		s.Nodes = append(s.Nodes, node("md-old", false))
		s.Pods = append(s.Pods, dsPod("kube-system", "kube-proxy", "zzzzz", "md-old", crashLooping(9)))
	})
	if len(onLive.Deviations()) == 0 {
		t.Error("a crashlooping kube-proxy on a node that exists passed")
	}
}
