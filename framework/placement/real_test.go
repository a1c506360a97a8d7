package placement

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/wait"

	"github.com/tkg-e2e/harness/framework/assert"
	"github.com/tkg-e2e/harness/framework/assert/asserttest"
)

// Real-cluster tests: they run against the cluster HARNESS_TEST_KUBECONFIG
// points at (scripts/test-assertions-real.sh creates a kind cluster with
// kapp-controller and the busybox image loaded) and prove that the checks
// fail when they must, and say why.

const (
	// settle bounds how long a fresh kind cluster may take to match the matrix
	// (CoreDNS and kapp-controller become Ready within about a minute).
	settle = 3 * time.Minute
	// deviationWindow is how long Check polls a cluster that is known to be
	// wrong; the deviation does not heal, so a short wait only costs time.
	deviationWindow = 5 * time.Second
	// podStart bounds the wait for a test pod to reach the state under test.
	podStart  = 2 * time.Minute
	testImage = "busybox:1.35.0"
)

// requireDeployments is a workload matrix with one must row per
// namespace/name Deployment, each row named after its Deployment.
func requireDeployments(t *testing.T, name string, deployments ...string) *Matrix {
	t.Helper()
	y := "name: " + name + "\nroles: [workload]\ncomponents:\n"
	for _, d := range deployments {
		ns, dep, _ := strings.Cut(d, "/")
		y += fmt.Sprintf("- name: %s\n  namespace: %s\n  match: {deployment: %s}\n  roles: {workload: must}\n", dep, ns, dep)
	}
	m, err := Parse([]byte(y), "inline")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

type realCluster struct {
	c client.Client
	k *kube.Cluster
}

func connect(t *testing.T) realCluster {
	k := asserttest.Connect(t, testImage)
	return realCluster{c: k.Client, k: k}
}

// check runs the placement check of m on the kind cluster as a workload cluster.
func (rc realCluster) check(t *testing.T, m *Matrix, timeout time.Duration, progress io.Writer) (*Report, error) {
	t.Helper()
	start := time.Now()
	r, err := assert.CheckTarget(context.Background(), NewCheck(m), assert.Target{Role: assert.Workload, Name: "kind", Cluster: rc.k},
		assert.Options{Timeout: timeout, Interval: time.Second, Progress: progress})
	t.Logf("check returned after %s:\n%v", time.Since(start).Round(time.Millisecond), err)
	if r == nil {
		t.Fatalf("no report: %v", err)
	}
	if err != nil {
		var failed *assert.FailedError
		if !errors.As(err, &failed) {
			t.Fatalf("want a placement failure, got %v", err)
		}
	}
	return r.(*Report), err
}

func suffix() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// createNamespace creates a namespace the test owns and deletes it afterwards.
// It refuses an existing one: the test would otherwise delete something it
// did not create.
func (rc realCluster) createNamespace(t *testing.T, name string) {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := rc.c.Create(ctx, ns); err != nil {
		if apierrors.IsAlreadyExists(err) {
			t.Fatalf("namespace %s already exists: refusing to run a test that creates and deletes it (is this a real management cluster?)", name)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := rc.c.Delete(ctx, ns); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting namespace %s: %v", name, err)
			return
		}
		// Wait, so that a rerun does not find the fixed-name namespace still terminating.
		err := wait.For(ctx, wait.Options{What: "namespace " + name + " deleted", Timeout: podStart}, func(ctx context.Context) (bool, string, error) {
			err := rc.c.Get(ctx, client.ObjectKey{Name: name}, &corev1.Namespace{})
			return apierrors.IsNotFound(err), "", client.IgnoreNotFound(err)
		})
		if err != nil {
			t.Errorf("%v", err)
		}
	})
}

func busyboxDeployment(ns, name string, command ...string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	one := int32(1)
	grace := int64(1)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: &grace,
					Containers: []corev1.Container{{
						Name: "main", Image: testImage, ImagePullPolicy: corev1.PullIfNotPresent, Command: command,
					}},
				},
			},
		},
	}
}

// waitForPod waits until a pod of the Deployment satisfies ok.
func (rc realCluster) waitForPod(t *testing.T, ns, app, what string, ok func(*corev1.Pod) bool) corev1.Pod {
	t.Helper()
	var found corev1.Pod
	err := wait.For(context.Background(), wait.Options{What: what, Timeout: podStart, Interval: time.Second, Progress: asserttest.Log{T: t}},
		func(ctx context.Context) (bool, string, error) {
			var pods corev1.PodList
			if err := rc.c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app": app}); err != nil {
				return false, "", err
			}
			for _, p := range pods.Items {
				if ok(&p) {
					found = p
					return true, p.Name, nil
				}
			}
			return false, describePods(pods.Items), nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func describePods(pods []corev1.Pod) string {
	var s []string
	for _, p := range pods {
		ps := podState(&p, nil)
		s = append(s, p.Name+" "+ps.Phase+" "+ps.Reason)
	}
	return strings.Join(s, ", ")
}

func TestRealHealthyClusterPassesLocalMatrixAsWorkload(t *testing.T) {
	rc := connect(t)
	m, err := Load("../../config/placement/local.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r, err := rc.check(t, m, settle, asserttest.Log{T: t})
	if err != nil {
		t.Fatalf("a kind cluster with kapp-controller is a healthy workload cluster of the local profile:\n%v", err)
	}
	t.Logf("passed: %s", r.Summary())
	if _, err := HTML(m, r); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + Markdown(m, r))
}

// A management-only controller on a workload-role cluster must be reported
// as unexpected, with the node it runs on.
func TestRealManagementOnlyComponentOnWorkloadFails(t *testing.T) {
	rc := connect(t)
	m, err := Load("../../config/placement/local.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rc.createNamespace(t, "capi-system")
	d := busyboxDeployment("capi-system", "capi-controller-manager", "sh", "-c", "while true; do sleep 3600; done")
	if err := rc.c.Create(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	pod := rc.waitForPod(t, "capi-system", "capi-controller-manager", "impostor capi-controller-manager pod scheduled",
		func(p *corev1.Pod) bool { return p.Spec.NodeName != "" })

	r, err := rc.check(t, m, deviationWindow, nil)
	if err == nil {
		t.Fatal("want a placement failure")
	}
	res := result(t, r, "capi-controller-manager")
	if res.Verdict != assert.Unexpected {
		t.Errorf("capi-controller-manager: %q, want unexpected", res.Verdict)
	}
	asserttest.Says(t, "failure message", err.Error(),
		"| capi-controller-manager | capi-system | Deployment capi-controller-manager | – must | ! unexpected |",
		"must not run on a workload cluster; runs on node "+pod.Spec.NodeName,
		"capi-system/"+pod.Name,
	)
	if len(r.Deviations()) != 1 {
		t.Errorf("only the impostor should deviate, got: %s", r.Summary())
	}
}

// A required pod that crashloops must be reported as not ready with phase,
// reason, restarts and the last lines of its (previous) log.
func TestRealCrashLoopingRequiredPodFails(t *testing.T) {
	rc := connect(t)
	ns := "placement-crash-" + suffix()
	rc.createNamespace(t, ns)
	m := requireDeployments(t, "crash", ns+"/crasher")
	d := busyboxDeployment(ns, "crasher", "sh", "-c", "echo harness-crash-marker: cannot open /etc/crasher.conf; exit 3")
	if err := rc.c.Create(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	rc.waitForPod(t, ns, "crasher", "crasher pod restarted at least once", func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].RestartCount >= 1
	})

	r, err := rc.check(t, m, deviationWindow, nil)
	if err == nil {
		t.Fatal("want a placement failure")
	}
	res := result(t, r, "crasher")
	if res.Verdict != assert.NotReady || len(res.Pods) != 1 {
		t.Fatalf("crasher: %q with %d pods, want not ready", res.Verdict, len(res.Pods))
	}
	p := res.Pods[0]
	if p.Ready || p.Restarts < 1 || !strings.Contains(p.Reason, "code 3") {
		t.Errorf("pod state lacks the crash facts: %+v", p)
	}
	asserttest.Says(t, "failure message", err.Error(), "✗ not ready", "restart(s)", "harness-crash-marker: cannot open /etc/crasher.conf")
}

// Missing: a must row whose pods do not exist.
func TestRealMissingRequiredComponentFails(t *testing.T) {
	rc := connect(t)
	m := requireDeployments(t, "missing", "kube-system/coredns", "kube-system/metrics-server")
	r, err := rc.check(t, m, deviationWindow, nil)
	if err == nil || result(t, r, "metrics-server").Verdict != assert.Missing || result(t, r, "coredns").Verdict != assert.OK {
		t.Fatalf("want metrics-server missing and coredns ok, got %v", err)
	}
	if !strings.Contains(err.Error(), "no pod in kube-system matches Deployment metrics-server") {
		t.Errorf("failure message does not say what was looked for:\n%v", err)
	}
}

// Issue 15's fault: a DaemonSet in kube-system that no row describes,
// crashlooping on every node, must fail the check with its owner, restarts,
// exit code and log tail, while the healthy unlisted kube-system pods of the
// same cluster (kindnet, kube-proxy, the static pods) pass.
func TestRealUnlistedCrashLoopingDaemonSetFails(t *testing.T) {
	rc := connect(t)
	name := "tkg-e2e-crashy-" + suffix()
	labels := map[string]string{"app": name}
	grace := int64(1)
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: name},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: &grace,
					Tolerations:                   []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
					Containers: []corev1.Container{{Name: "agent", Image: testImage, ImagePullPolicy: corev1.PullIfNotPresent,
						Command: []string{"sh", "-c", "echo harness-unlisted-marker: bad flag --frobnicate; exit 3"}}},
				},
			},
		},
	}
	if err := rc.c.Create(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := rc.c.Delete(context.Background(), ds); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting DaemonSet %s: %v", name, err)
		}
	})
	rc.waitForPod(t, "kube-system", name, "unlisted DaemonSet pod restarted at least once", func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].RestartCount >= 1
	})
	m := requireDeployments(t, "unlisted", "kube-system/coredns")
	r, err := rc.check(t, m, deviationWindow, nil)
	if err == nil {
		t.Fatal("an unlisted crashlooping DaemonSet in kube-system passed the placement check")
	}
	var bad []Result
	for _, u := range r.Unlisted {
		if u.Verdict.Failing() {
			bad = append(bad, u)
		}
	}
	if len(bad) != 1 || !strings.Contains(bad[0].Component, name) {
		t.Fatalf("failing unlisted workloads = %+v, want exactly %s (healthy kube-system pods must not fail)", bad, name)
	}
	asserttest.Says(t, "failure message", err.Error(), name, "DaemonSet", "code 3", "restart(s)", "harness-unlisted-marker: bad flag --frobnicate")
}
