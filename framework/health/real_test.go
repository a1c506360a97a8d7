package health

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/assert"
	"github.com/tkg-e2e/harness/framework/assert/asserttest"
	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/wait"
)

// Real-cluster tests: the one-node kind cluster of
// scripts/test-assertions-real.sh (HARNESS_TEST_KUBECONFIG). They run with
// go test -p 1: the NotReady test stops the node's kubelet, which no other
// package's test may see.

const (
	settle = 3 * time.Minute
	// notReadyWithin bounds how long the node controller takes to mark a node
	// whose kubelet stopped (node-monitor-grace-period 40 s, then a poll).
	notReadyWithin = 2 * time.Minute
)

func expectKind(k *kube.Cluster, t *testing.T) Expectation {
	t.Helper()
	v, err := k.Clientset.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	return Expectation{ControlPlaneNodes: 1, WorkerNodes: 0, KubernetesVersion: v.GitVersion}
}

func checkReal(t *testing.T, k *kube.Cluster, e Expectation, timeout time.Duration) (assert.Report, error) {
	t.Helper()
	c := NewCheck(func(assert.Target) (Expectation, bool) { return e, true })
	return assert.CheckTarget(context.Background(), c, assert.Target{Role: assert.Workload, Name: "kind", Cluster: k},
		assert.Options{Timeout: timeout, Interval: 2 * time.Second, Progress: asserttest.Log{T: t}})
}

func TestRealHealthyKindClusterPasses(t *testing.T) {
	k := asserttest.Connect(t, "busybox:1.35.0")
	if _, err := checkReal(t, k, expectKind(k, t), settle); err != nil {
		t.Fatalf("a healthy kind cluster failed the health check: %v", err)
	}
	// The same cluster against the wrong size and version must fail, naming both.
	e := expectKind(k, t)
	e.WorkerNodes, e.KubernetesVersion = 2, "v1.32.0"
	_, err := checkReal(t, k, e, 3*time.Second)
	if err == nil {
		t.Fatal("1 node passed an expectation of 1 + 2 at v1.32.0")
	}
	asserttest.Says(t, "failure", err.Error(), "want 1 + 2", "v1.32.0")
}

// An APIService whose Service does not exist stays Available=False: the
// check must fail and quote the aggregator's reason.
func TestRealUnavailableAPIServiceFails(t *testing.T) {
	k := asserttest.Connect(t, "busybox:1.35.0")
	name := "v1.tkg-e2e-broken.example.com"
	as := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{"group": "tkg-e2e-broken.example.com", "version": "v1", "groupPriorityMinimum": int64(1000),
			"versionPriority": int64(15), "insecureSkipTLSVerify": true,
			"service": map[string]any{"namespace": "default", "name": "tkg-e2e-no-such-service", "port": int64(443)}},
	}}
	if err := k.Client.Create(context.Background(), as); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := k.Client.Delete(context.Background(), as); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting APIService %s: %v", name, err)
		}
	})
	_, err := checkReal(t, k, expectKind(k, t), 20*time.Second)
	if err == nil {
		t.Fatalf("APIService %s with no Service passed the health check", name)
	}
	asserttest.Says(t, "failure", err.Error(), name, "ServiceNotFound")
}

// A node whose kubelet stopped goes NotReady (Unknown): the check must fail
// naming the node and the node controller's reason. The kubelet is started
// again and the node must come back before the test ends.
func TestRealNodeNotReadyFails(t *testing.T) {
	k := asserttest.Connect(t, "busybox:1.35.0")
	var nodes corev1.NodeList
	if err := k.Client.List(context.Background(), &nodes); err != nil || len(nodes.Items) == 0 {
		t.Fatalf("listing nodes: %v (%d)", err, len(nodes.Items))
	}
	node := nodes.Items[0].Name // kind names the node after its container
	e := expectKind(k, t)
	docker := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("docker", args...).CombinedOutput(); err != nil {
			t.Fatalf("docker %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	docker("exec", node, "systemctl", "stop", "kubelet")
	t.Cleanup(func() {
		docker("exec", node, "systemctl", "start", "kubelet")
		if _, err := checkReal(t, k, e, settle); err != nil {
			t.Errorf("node %s did not come back after the kubelet was started again: %v", node, err)
		}
	})
	// Wait until the node controller has seen it, then check once more.
	err := wait.For(context.Background(), wait.Options{What: "node " + node + " NotReady after its kubelet stopped", Timeout: notReadyWithin,
		Interval: 2 * time.Second, Progress: asserttest.Log{T: t}}, func(ctx context.Context) (bool, string, error) {
		var n corev1.Node
		if err := k.Client.Get(ctx, client.ObjectKey{Name: node}, &n); err != nil {
			return false, "", err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status != corev1.ConditionTrue, string(c.Status) + " " + c.Reason, nil
			}
		}
		return false, "no Ready condition", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = checkReal(t, k, e, 3*time.Second)
	var fe *assert.FailedError
	if !errors.As(err, &fe) {
		t.Fatalf("want a FailedError naming the node, got %v", err)
	}
	asserttest.Says(t, "failure", err.Error(), node, "NodeStatusUnknown")
}
