package placement

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgofake "k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tkg-e2e/harness/framework/artifacts"
	"github.com/tkg-e2e/harness/framework/assert"
	"github.com/tkg-e2e/harness/framework/assert/asserttest"
	"github.com/tkg-e2e/harness/framework/kube"
)

// These tests cover the glue between the engine and Evaluate with fakes; the
// real-cluster tests (real_test.go) prove it against a kind cluster.

// fakeTarget is a cluster running snap; withLogs gives it a clientset (whose
// fake log of every container is "fake logs").
func fakeTarget(role, name string, snap Snapshot, withLogs bool) assert.Target {
	var objs []client.Object
	var rt []runtime.Object
	for i := range snap.Pods {
		objs = append(objs, &snap.Pods[i])
		rt = append(rt, &snap.Pods[i])
	}
	for i := range snap.Nodes {
		objs = append(objs, &snap.Nodes[i])
	}
	k := &kube.Cluster{Client: fake.NewClientBuilder().WithObjects(objs...).Build()}
	if withLogs {
		k.Clientset = clientgofake.NewClientset(rt...)
	}
	return assert.Target{Role: role, Name: name, Cluster: k}
}

func TestCheckPassesHealthyCluster(t *testing.T) {
	m := mustParse(t, evalMatrix)
	r, err := assert.CheckTarget(context.Background(), NewCheck(m), fakeTarget(assert.Workload, "wl", healthyWorkload(), false),
		assert.Options{Timeout: time.Second, Interval: 10 * time.Millisecond})
	if err != nil || r == nil || r.Failed() {
		t.Fatalf("err=%v report=%v", err, r)
	}
}

func crashingKappController() Snapshot {
	snap := healthyWorkload()
	snap.Pods[3] = deployPod("tkg-system", "kapp-controller", "64c8bdfc86", "lcq2p", "md-0", crashLooping(3))
	return snap
}

func TestCheckFailureCarriesMarkdownAndLogs(t *testing.T) {
	m := mustParse(t, evalMatrix)
	var progress bytes.Buffer
	r, err := assert.CheckTarget(context.Background(), NewCheck(m), fakeTarget(assert.Workload, "wl", crashingKappController(), true),
		assert.Options{Timeout: 200 * time.Millisecond, Interval: 20 * time.Millisecond, Progress: &progress})
	var failed *assert.FailedError
	if !errors.As(err, &failed) {
		t.Fatalf("want *assert.FailedError, got %v", err)
	}
	if failed.Report != r || !r.Failed() {
		t.Fatalf("the error must carry the returned report")
	}
	msg := err.Error()
	asserttest.Says(t, "error message", msg, `placement check of the workload cluster "wl" failed`, "| kapp-controller |", "✗ not ready",
		"last log lines of container manager (previous run)", "fake logs")
	if !strings.Contains(progress.String(), "[placement]") {
		t.Errorf("no progress written: %q", progress.String())
	}
}

func TestCheckWithoutClientsetSaysLogsWereNotFetched(t *testing.T) {
	m := mustParse(t, evalMatrix)
	_, err := assert.CheckTarget(context.Background(), NewCheck(m), fakeTarget(assert.Workload, "", crashingKappController(), false),
		assert.Options{Timeout: 50 * time.Millisecond, Interval: 10 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "not fetched (no clientset given)") {
		t.Fatalf("err = %v", err)
	}
}

func TestCheckRejectsBadInput(t *testing.T) {
	m := mustParse(t, evalMatrix)
	ok := fakeTarget(assert.Workload, "wl", Snapshot{Nodes: []corev1.Node{node("n", true)}}, false)
	edge := ok
	edge.Role = "edge"
	opts := assert.Options{Timeout: time.Second}
	for name, tc := range map[string]struct {
		check  *Check
		target assert.Target
		opts   assert.Options
	}{
		"no client":      {NewCheck(m), assert.Target{Role: assert.Workload}, opts},
		"no matrix":      {NewCheck(nil), ok, opts},
		"unknown role":   {NewCheck(m), edge, opts},
		"no timeout set": {NewCheck(m), ok, assert.Options{}},
	} {
		if _, err := assert.CheckTarget(context.Background(), tc.check, tc.target, tc.opts); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// Run is what the suite calls: every cluster of a matrix role is checked,
// the others are left out, and placement.md and placement.html are written
// through the artifacts Writer (redacted like every artifact).
func TestRunChecksEveryCoveredClusterAndWritesTheMatrix(t *testing.T) {
	m := mustParse(t, evalMatrix)
	w, err := artifacts.New(artifacts.Options{Root: t.TempDir(), MaxFileSize: artifacts.DefaultMaxFileSize, Secrets: []string{"s3cr3t-token"}})
	if err != nil {
		t.Fatal(err)
	}
	bad := crashingKappController()
	bad.Pods[3].Status.ContainerStatuses[0].State.Waiting.Message = "password s3cr3t-token rejected"
	targets := []assert.Target{
		fakeTarget("bootstrap", "kind", Snapshot{}, false),
		fakeTarget(assert.Workload, "wl-a", healthyWorkload(), false),
		fakeTarget(assert.Workload, "wl-b", bad, true),
	}
	out, err := assert.Run(context.Background(), NewCheck(m), targets, w, assert.Options{Timeout: 100 * time.Millisecond, Interval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Checked) != 2 || len(out.Failures) != 1 || !strings.Contains(out.Failures[0].Error(), `workload cluster "wl-b": 1/7 components deviate: kapp-controller not ready`) {
		t.Fatalf("want wl-a and wl-b checked and wl-b failing, got %d checked, failures %v", len(out.Checked), out.Failures)
	}
	if err := out.Err(); err == nil || !strings.Contains(err.Error(), "| management | workload (wl-a) | workload (wl-b) |") {
		t.Errorf("the outcome's error must carry the whole matrix: %v", err)
	}
	for path, want := range map[string]string{out.MarkdownPath: "#### ✗ kapp-controller: not ready", out.HTMLPath: `<td class="bad"`} {
		b, err := os.ReadFile(path)
		if err != nil || !strings.Contains(string(b), want) {
			t.Errorf("%s: %v, lacks %q", path, err, want)
		}
		if strings.Contains(string(b), "s3cr3t-token") {
			t.Errorf("%s: a secret went past the Writer", path)
		}
	}
	if filepath.Base(out.MarkdownPath) != "placement.md" || filepath.Base(out.HTMLPath) != "placement.html" {
		t.Errorf("files: %s %s", out.MarkdownPath, out.HTMLPath)
	}
}

// The logs of a failing workload that no row describes are fetched like a
// row's: the reader of the failure needs its crash as much.
func TestCheckFetchesLogsOfFailingUnlistedPods(t *testing.T) {
	m := mustParse(t, evalMatrix)
	r, err := assert.CheckTarget(context.Background(), NewCheck(m), fakeTarget(assert.Workload, "wl", crashyDaemonSet(healthyWorkload()), true),
		assert.Options{Timeout: 100 * time.Millisecond, Interval: 20 * time.Millisecond})
	var failed *assert.FailedError
	if !errors.As(err, &failed) {
		t.Fatalf("want *assert.FailedError, got %v", err)
	}
	res := unlisted(t, r.(*Report), "kube-system/crashy (DaemonSet, no matrix row)")
	for _, p := range res.Pods {
		if len(p.Logs) != 1 || p.Logs[0].Lines != "fake logs" {
			t.Errorf("%s: logs %+v", p.Name, p.Logs)
		}
	}
	asserttest.Says(t, "error message", err.Error(), "#### ✗ kube-system/crashy (DaemonSet, no matrix row): not ready",
		"last log lines of container manager (previous run)", "fake logs")
}
