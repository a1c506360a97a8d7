package placement

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/tkg-e2e/harness/framework/assert"
	"github.com/tkg-e2e/harness/framework/assert/asserttest"
)

// crashyDaemonSet is a DaemonSet no row of evalMatrix describes, crashlooping
// on both nodes with exit code 3.
func crashyDaemonSet(snap Snapshot) Snapshot {
	snap.Pods = append(snap.Pods,
		dsPod("kube-system", "crashy", "k2x7q", "cp-0", crashLooping(7), lastExit(3)),
		dsPod("kube-system", "crashy", "p9w4d", "md-0", crashLooping(7), lastExit(3)))
	return snap
}

func unlisted(t *testing.T, r *Report, component string) Result {
	t.Helper()
	for _, res := range r.Unlisted {
		if res.Component == component {
			return res
		}
	}
	t.Fatalf("no unlisted entry %s in %+v", component, r.Unlisted)
	return Result{}
}

func TestUnlistedCrashLoopingDaemonSetFails(t *testing.T) {
	m := mustParse(t, evalMatrix)
	r, err := Evaluate(m, assert.Workload, "wl", crashyDaemonSet(healthyWorkload()))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Failed() {
		t.Fatalf("a crashlooping DaemonSet in kube-system passed: %s", r.Summary())
	}
	res := unlisted(t, r, "kube-system/crashy (DaemonSet, no matrix row)")
	if res.Verdict != assert.NotReady || res.Expectation != Unlisted || res.Owner != "DaemonSet crashy" || len(res.Pods) != 2 {
		t.Fatalf("got %q %q %q with %d pods", res.Verdict, res.Expectation, res.Owner, len(res.Pods))
	}
	p := res.Pods[0]
	if p.Restarts != 7 || !strings.Contains(p.Reason, "CrashLoopBackOff") || !strings.Contains(p.Reason, "Error, code 3") {
		t.Errorf("pod state lacks the crashloop facts: %+v", p)
	}
	if strings.Join(p.Problems, "; ") != "not Ready; 7 restarts, budget 3" {
		t.Errorf("problems: %v", p.Problems)
	}
	if res.Detail != "2/2 pod(s) failing readiness; no row describes this workload, so defaults.readiness applies (Ready, at most 3 restarts)" {
		t.Errorf("detail %q", res.Detail)
	}
	if len(r.Unmatched) != 0 {
		t.Errorf("failing pods are not a hint: %+v", r.Unmatched)
	}
	asserttest.Says(t, "summary", r.Summary(), "1/8 components deviate: kube-system/crashy (DaemonSet, no matrix row) not ready")
	if i := slices.IndexFunc(r.Rows(), func(row assert.Row) bool { return row.Name == res.Component }); i < 0 || r.Rows()[i].Verdict != assert.NotReady {
		t.Errorf("the engine's rows must carry the failure: %+v", r.Rows())
	}
}

func TestUnlistedHealthyPodPassesAndIsListed(t *testing.T) {
	m := mustParse(t, evalMatrix)
	snap := healthyWorkload()
	snap.Pods = append(snap.Pods, deployPod("kube-system", "extra-addon", "5d8f7c9b6", "x1y2z", "md-0", restarted(2)))
	r, _ := Evaluate(m, assert.Workload, "wl", snap)
	if r.Failed() {
		t.Fatalf("a healthy unlisted pod failed: %s", r.Summary())
	}
	res := unlisted(t, r, "kube-system/extra-addon (Deployment, no matrix row)")
	if res.Verdict != assert.OK || !strings.Contains(res.Detail, "not a failure") {
		t.Errorf("got %q %q", res.Verdict, res.Detail)
	}
	if len(r.Unmatched) != 1 || r.Unmatched[0].Name != "extra-addon-5d8f7c9b6-x1y2z" || r.Unmatched[0].Node != "md-0" {
		t.Errorf("want the pod listed as a hint: %+v", r.Unmatched)
	}
	rows := r.Rows()
	if last := rows[len(rows)-1]; last.Verdict != assert.Unlisted || !strings.Contains(last.Detail, "not a failure") {
		t.Errorf("want a warning row for the pod, got %+v", last)
	}
	asserttest.Says(t, "summary", r.Summary(), "7 components as expected, 1 workload(s) without a row healthy")
	asserttest.Says(t, "markdown", Markdown(m, r), "1 pod(s) on the workload cluster \"wl\" that no row describes (not a failure)",
		"`kube-system/extra-addon-5d8f7c9b6-x1y2z` on md-0")
}

func TestUnlistedNeverReadyPodFails(t *testing.T) {
	m := mustParse(t, evalMatrix)
	snap := healthyWorkload()
	snap.Pods = append(snap.Pods, basePod("tkg-system", "lonely", "md-0", neverReady()))
	r, _ := Evaluate(m, assert.Workload, "wl", snap)
	res := unlisted(t, r, "tkg-system/lonely (pod, no matrix row)")
	if !r.Failed() || res.Verdict != assert.NotReady || strings.Join(res.Pods[0].Problems, ";") != "not Ready" {
		t.Fatalf("got %q %+v", res.Verdict, res.Pods)
	}
}

// A row decides for its pods: an unlisted pod would fail the default budget
// of 3 restarts and the Ready rule, this one's row allows both.
func TestUnlistedRowStillDecidesForItsPods(t *testing.T) {
	m := mustParse(t, evalMatrix+`- name: flaky
  namespace: kube-system
  match: {daemonSet: flaky}
  roles: {management: optional, workload: optional}
  readiness: {ready: false, maxRestarts: 100}
`)
	snap := healthyWorkload()
	snap.Pods = append(snap.Pods, dsPod("kube-system", "flaky", "abcde", "md-0", crashLooping(50)))
	r, _ := Evaluate(m, assert.Workload, "wl", snap)
	if r.Failed() || result(t, r, "flaky").Verdict != assert.OK {
		t.Fatalf("the row allows the restarts: %s", r.Summary())
	}
	if len(r.Unlisted) != 0 || len(r.Unmatched) != 0 {
		t.Errorf("a matched pod was judged twice: %+v %+v", r.Unlisted, r.Unmatched)
	}
}

func TestUnlistedCompletedJobPodDoesNotFail(t *testing.T) {
	m := mustParse(t, evalMatrix)
	snap := healthyWorkload()
	snap.Pods = append(snap.Pods, basePod("kube-system", "cleanup-29012345-8dx2k", "md-0", owner("Job", "cleanup-29012345"), succeeded()))
	r, _ := Evaluate(m, assert.Workload, "wl", snap)
	if r.Failed() || len(r.Unlisted) != 0 || len(r.Unmatched) != 0 {
		t.Fatalf("a completed Job pod was evaluated: %s %+v", r.Summary(), r.Unlisted)
	}
}

func TestUnlistedSystemNamespacesOfTheFileAreChecked(t *testing.T) {
	m := mustParse(t, strings.Replace(evalMatrix, "name: eval", "name: eval\nsystemNamespaces: [monitoring]", 1))
	if got := strings.Join(m.SystemNamespaceList(), ","); got != "capi-system,cert-manager,kapp-controller,kube-system,monitoring,tkg-system,vmware-system-antrea" {
		t.Errorf("system namespaces %s", got)
	}
	snap := healthyWorkload()
	snap.Pods = append(snap.Pods, deployPod("monitoring", "node-exporter", "7c9f6d5b4", "q8r2t", "md-0", crashLooping(4)))
	r, _ := Evaluate(m, assert.Workload, "wl", snap)
	if v := unlisted(t, r, "monitoring/node-exporter (Deployment, no matrix row)").Verdict; v != assert.NotReady || !r.Failed() {
		t.Errorf("crashlooping in a namespace of systemNamespaces: %q", v)
	}
	// Without systemNamespaces, monitoring is an application namespace.
	r, _ = Evaluate(mustParse(t, evalMatrix), assert.Workload, "wl", snap)
	if r.Failed() || len(r.Unlisted) != 0 {
		t.Errorf("monitoring is not a system namespace of evalMatrix: %s", r.Summary())
	}
}

func TestUnlistedIgnoresApplicationNamespaces(t *testing.T) {
	m := mustParse(t, evalMatrix)
	snap := healthyWorkload()
	snap.Pods = append(snap.Pods, dsPod("default", "crashy", "k2x7q", "md-0", crashLooping(7)),
		basePod("default", "lonely", "md-0", neverReady()))
	r, _ := Evaluate(m, assert.Workload, "wl", snap)
	if r.Failed() || len(r.Unlisted) != 0 || len(r.Unmatched) != 0 {
		t.Fatalf("pods of default were evaluated: %s %+v", r.Summary(), r.Unlisted)
	}
}

func TestWorkloadOf(t *testing.T) {
	unlabelled := deployPod("kube-system", "coredns", "5d78c9869d", "abcde", "md-0")
	delete(unlabelled.Labels, "pod-template-hash")
	job := basePod("kube-system", "cleanup-1-xyz", "md-0", owner("Job", "cleanup-1"))
	for _, tc := range []struct {
		pod  corev1.Pod
		want string
	}{
		{deployPod("kube-system", "coredns", "5d78c9869d", "abcde", "md-0"), "kube-system/coredns (Deployment, no matrix row)"},
		{unlabelled, "kube-system/coredns (Deployment, no matrix row)"},
		{dsPod("kube-system", "kindnet", "abcde", "md-0"), "kube-system/kindnet (DaemonSet, no matrix row)"},
		{basePod("avi-system", "ako-0", "md-0", owner("StatefulSet", "ako")), "avi-system/ako (StatefulSet, no matrix row)"},
		{staticPod("etcd", "cp-0"), "kube-system/etcd (static pod, no matrix row)"},
		{job, "kube-system/cleanup-1 (Job, no matrix row)"},
		{basePod("kube-system", "debug", "md-0"), "kube-system/debug (pod, no matrix row)"},
	} {
		if got := workloadOf(&tc.pod).title(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.pod.Name, got, tc.want)
		}
	}
}
