package placement

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgofake "k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// These tests cover the glue between the API and Evaluate with fakes; the
// real-cluster tests (real_test.go) prove it against a kind cluster.

func fakeClients(snap Snapshot) (client.Client, *clientgofake.Clientset) {
	var objs []client.Object
	var rt []runtime.Object
	for i := range snap.Pods {
		objs = append(objs, &snap.Pods[i])
		rt = append(rt, &snap.Pods[i])
	}
	for i := range snap.Nodes {
		objs = append(objs, &snap.Nodes[i])
	}
	return fake.NewClientBuilder().WithObjects(objs...).Build(), clientgofake.NewClientset(rt...)
}

func TestCheckPassesHealthyCluster(t *testing.T) {
	m := mustParse(t, evalMatrix)
	c, _ := fakeClients(healthyWorkload())
	r, err := Check(context.Background(), CheckInput{Client: c, Matrix: m, Role: RoleWorkload, Cluster: "wl",
		Timeout: time.Second, Interval: 10 * time.Millisecond})
	if err != nil || r == nil || r.Failed() {
		t.Fatalf("err=%v report=%v", err, r)
	}
}

func TestCheckFailureCarriesMarkdownAndLogs(t *testing.T) {
	m := mustParse(t, evalMatrix)
	snap := healthyWorkload()
	snap.Pods[3] = deployPod("tkg-system", "kapp-controller", "64c8bdfc86", "lcq2p", "md-0", crashLooping(3))
	c, cs := fakeClients(snap)
	var progress bytes.Buffer
	r, err := Check(context.Background(), CheckInput{Client: c, Clientset: cs, Matrix: m, Role: RoleWorkload, Cluster: "wl",
		Timeout: 200 * time.Millisecond, Interval: 20 * time.Millisecond, Progress: &progress, Prefix: "[placement]"})
	var failed *FailedError
	if !errors.As(err, &failed) {
		t.Fatalf("want *FailedError, got %v", err)
	}
	if failed.Report != r || !r.Failed() {
		t.Fatalf("the error must carry the returned report")
	}
	msg := err.Error()
	for _, want := range []string{`placement check of the workload cluster "wl" failed`, "| kapp-controller |", "✗ not ready",
		"last log lines of container manager (previous run)", "fake logs"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error message lacks %q:\n%s", want, msg)
		}
	}
	if !strings.Contains(progress.String(), "[placement]") {
		t.Errorf("no progress written: %q", progress.String())
	}
}

func TestCheckWithoutClientsetSaysLogsWereNotFetched(t *testing.T) {
	m := mustParse(t, evalMatrix)
	snap := healthyWorkload()
	snap.Pods[3] = deployPod("tkg-system", "kapp-controller", "64c8bdfc86", "lcq2p", "md-0", crashLooping(3))
	c, _ := fakeClients(snap)
	_, err := Check(context.Background(), CheckInput{Client: c, Matrix: m, Role: RoleWorkload, Timeout: 50 * time.Millisecond, Interval: 10 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "not fetched (no clientset given)") {
		t.Fatalf("err = %v", err)
	}
}

func TestCheckRejectsBadInput(t *testing.T) {
	m := mustParse(t, evalMatrix)
	c, _ := fakeClients(Snapshot{Nodes: []corev1.Node{node("n", true)}})
	for name, in := range map[string]CheckInput{
		"no client":      {Matrix: m, Role: RoleWorkload, Timeout: time.Second},
		"no matrix":      {Client: c, Role: RoleWorkload, Timeout: time.Second},
		"unknown role":   {Client: c, Matrix: m, Role: "edge", Timeout: time.Second},
		"no timeout set": {Client: c, Matrix: m, Role: RoleWorkload},
	} {
		if _, err := Check(context.Background(), in); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
