package kube

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	logf "sigs.k8s.io/cluster-api/cmd/clusterctl/log"
)

func TestParseManifestSkipsEmptyDocsAndExpandsLists(t *testing.T) {
	m := []byte(`
---
apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: x}
---
# only a comment
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Namespace
  metadata: {name: x}
- apiVersion: apiextensions.k8s.io/v1
  kind: CustomResourceDefinition
  metadata: {name: foos.example.com}
`)
	objs, err := ParseManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 3 {
		t.Fatalf("got %d objects, want 3", len(objs))
	}
	ordered := applyOrder(objs)
	var kinds []string
	for _, o := range ordered {
		kinds = append(kinds, o.GetKind())
	}
	if got := strings.Join(kinds, ","); got != "CustomResourceDefinition,Namespace,ConfigMap" {
		t.Fatalf("apply order %s, want CRDs, then Namespaces, then the rest", got)
	}
}

func TestParseManifestRejectsObjectsWithoutKind(t *testing.T) {
	_, err := ParseManifest([]byte("metadata: {name: a}\n"))
	if err == nil || !strings.Contains(err.Error(), "no kind/apiVersion") {
		t.Fatalf("want a kind/apiVersion error, got %v", err)
	}
}

func TestApplyValidatesInput(t *testing.T) {
	err := Apply(context.Background(), ApplyInput{})
	for _, want := range []string{"Cluster is nil", "Objects is empty", "What is empty", "Timeout must be > 0"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
}

func TestClusterctlCallRoutesAndRestoresTheLogger(t *testing.T) {
	var seen []LogEntry
	var out strings.Builder
	prev := logf.Log
	err := ClusterctlCall(context.Background(), ClusterctlLog{Out: &out, Prefix: "[x]", Observe: func(e LogEntry) { seen = append(seen, e) }},
		func(context.Context) error {
			logf.Log.Info("Performing move...")
			logf.Log.V(5).Info("Machine", "count", 2)
			logf.Log.WithValues("k", "v").V(1).Info("Creating", "Cluster", "mgmt", "Namespace", "ns")
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 3 || seen[1].Msg != "Machine" || seen[1].KV[1] != 2 || seen[2].KV[0] != "k" {
		t.Fatalf("observed %+v", seen)
	}
	if got := out.String(); got != "[x] clusterctl: Performing move...\n" {
		t.Fatalf("printed %q, want only the level-0 line", got)
	}
	if logf.Log != prev {
		t.Fatal("previous clusterctl logger not restored")
	}
}

func TestClusterctlCallReturnsPromptlyOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	release := make(chan struct{})
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	start := time.Now()
	err := ClusterctlCall(ctx, ClusterctlLog{}, func(context.Context) error { <-release; return nil })
	if err == nil || !errors.Is(err, context.Canceled) || time.Since(start) > 2*time.Second {
		t.Fatalf("err=%v after %s, want a prompt interruption", err, time.Since(start))
	}
	close(release)
	// The next call waits for the abandoned one to finish, then runs.
	if err := ClusterctlCall(context.Background(), ClusterctlLog{}, func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
}

func TestPodNotReadyReasonSaysHowACrashLoopEnds(t *testing.T) {
	p := &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
		RestartCount: 6,
		State:        corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error",
			Message: "I1122 starting\nE1122 main.go:352] \"Problem running manager\" err=\"too many open files\"\n"}},
	}}}}
	got := PodNotReadyReason(p)
	want := `CrashLoopBackOff, 6 restarts, last exit 1 Error: E1122 main.go:352] "Problem running manager" err="too many open files"`
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}
