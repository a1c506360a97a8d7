package health

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/tkg-e2e/harness/framework/artifacts"
	"github.com/tkg-e2e/harness/framework/assert"
	"github.com/tkg-e2e/harness/framework/assert/asserttest"
)

// observe judges a cluster once, as one poll of the wait does.
func observe(t *testing.T, c client.Client) *Report {
	t.Helper()
	p, err := NewCheck(expectOneTwo).Plan(target(c), assert.Options{Timeout: time.Second})
	if err != nil || p == nil {
		t.Fatalf("Plan: %v, %v", p, err)
	}
	r, err := p.Observe(context.Background())
	if err != nil {
		t.Fatalf("Observe: %v", err)
	}
	return r.(*Report)
}

// row returns the row of that name, failing the test without one.
func row(t *testing.T, r *Report, name string) assert.Row {
	t.Helper()
	for _, row := range r.Rows() {
		if row.Name == name {
			return row
		}
	}
	t.Fatalf("no row %q in %+v", name, r.Rows())
	return assert.Row{}
}

func TestHealthyClusterPasses(t *testing.T) {
	r := observe(t, cluster(t, nil))
	if r.Failed() {
		t.Fatalf("a healthy cluster fails: %s", r.Summary())
	}
	var names []string
	for _, row := range r.Rows() {
		names = append(names, row.Name)
		if row.Verdict != assert.OK {
			t.Errorf("row %s: %s (%s)", row.Name, row.Verdict, row.Detail)
		}
	}
	want := []string{"nodes", "node wl-cp-abcde", "node wl-md-0-xyz1", "node wl-md-0-xyz2", "APIServices",
		"webhook v.capi-webhooks.example.com (ValidatingWebhookConfiguration capi-webhooks)",
		"webhook m.external.example.com (MutatingWebhookConfiguration external)"}
	if len(names) != len(want) {
		t.Fatalf("rows %q, want %q", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Errorf("row %d: %q, want %q", i, names[i], want[i])
		}
	}
	asserttest.Says(t, "nodes row", row(t, r, "nodes").Detail, "3 nodes (1 control plane, 2 workers)")
	asserttest.Says(t, "APIServices row", row(t, r, "APIServices").Detail, "3 APIServices available", "v1beta1.metrics.k8s.io (kube-system/metrics-server)")
	asserttest.SaysNot(t, "APIServices row", row(t, r, "APIServices").Detail, "v1.apps")
	asserttest.Says(t, "URL webhook row", r.Rows()[6].Detail, "https://hooks.example.com/mutate", "not probed")
	asserttest.Says(t, "summary", r.Summary(), "3 nodes (1 control plane, 2 workers) Ready at v1.33.1", "3 APIServices available", "2 admission webhooks")
	asserttest.Says(t, "markdown", r.Markdown(), "## Health of the workload cluster \"wl\": PASSED", "| node wl-cp-abcde | ✓ ok |")
}

func TestNodeCountWrongFails(t *testing.T) {
	c := fakeClient(t, nil, append(append(healthyAPIServices(), healthyWebhooks()...),
		node("wl-cp-abcde", true, version), node("wl-md-0-xyz1", false, version))...)
	r := observe(t, c)
	got := row(t, r, "nodes")
	if got.Verdict != assert.Mismatch || !r.Failed() {
		t.Fatalf("nodes row %+v, want a mismatch that fails", got)
	}
	asserttest.Says(t, "nodes row", got.Detail, "2 nodes (1 control plane, 1 worker), want 1 + 2")
}

// Three nodes is the right total, but two control planes and one worker is
// not the cluster that was asked for.
func TestNodeSplitWrongFails(t *testing.T) {
	r := observe(t, cluster(t, nil, node("wl-md-0-xyz1", true, version)))
	asserttest.Says(t, "nodes row", row(t, r, "nodes").Detail, "3 nodes (2 control plane, 1 worker), want 1 + 2")
	if !r.Failed() {
		t.Error("a wrong split passes")
	}
}

func TestNodeNotReadyFailsNamingNodeAndReason(t *testing.T) {
	r := observe(t, cluster(t, nil, node("wl-md-0-xyz2", false, version, kubeletStopped)))
	got := row(t, r, "node wl-md-0-xyz2")
	if got.Verdict != assert.NotReady {
		t.Fatalf("verdict %q, want not ready", got.Verdict)
	}
	asserttest.Says(t, "node row", got.Detail, "worker: not Ready: Ready=Unknown (NodeStatusUnknown: Kubelet stopped posting node status.) since 2026-11-22T16:00:00Z")
	asserttest.Says(t, "summary", r.Summary(), "1 problem", "node wl-md-0-xyz2 not ready", "NodeStatusUnknown")
}

func TestNodeWithoutReadyConditionFails(t *testing.T) {
	n := node("wl-md-0-xyz2", false, version)
	n.Status.Conditions = nil
	r := observe(t, cluster(t, nil, n))
	asserttest.Says(t, "node row", row(t, r, "node wl-md-0-xyz2").Detail, "no Ready condition yet")
}

func TestDiskPressureFails(t *testing.T) {
	r := observe(t, cluster(t, nil, node("wl-md-0-xyz1", false, version,
		cond(corev1.NodeDiskPressure, corev1.ConditionTrue, "KubeletHasDiskPressure", "kubelet has disk pressure"))))
	got := row(t, r, "node wl-md-0-xyz1")
	if got.Verdict != assert.NotReady {
		t.Fatalf("verdict %q, want not ready", got.Verdict)
	}
	asserttest.Says(t, "node row", got.Detail, "DiskPressure=True (KubeletHasDiskPressure: kubelet has disk pressure)")
}

func TestCordonedNodeFails(t *testing.T) {
	n := node("wl-md-0-xyz1", false, version)
	n.Spec.Unschedulable = true
	r := observe(t, cluster(t, nil, n))
	asserttest.Says(t, "node row", row(t, r, "node wl-md-0-xyz1").Detail, "cordoned", "uncordon")
	if !r.Failed() {
		t.Error("a cordoned node passes")
	}
}

// A drained node whose kubelet then stopped is a Machine deleted without
// its Node (cluster-api#14024, a self-hosted upgrade, 2026-11-29): its
// stuck cause names the Machine and how to check and clear it, not an
// uncordon, which would not help. Cordoned and still posting keeps the
// uncordon hint.
func TestDrainedNodeWhoseKubeletStoppedIsNamedAnOrphan(t *testing.T) {
	n := node("mgmt-cp-old", true, version, cond(corev1.NodeReady, corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status."))
	n.Spec.Unschedulable = true
	n.Annotations = map[string]string{clusterv1.MachineAnnotation: "mgmt-cp-old-m1", clusterv1.ClusterNamespaceAnnotation: "tkg-system"}
	r := observe(t, cluster(t, nil, n))
	got := row(t, r, "node mgmt-cp-old")
	asserttest.Says(t, "stuck cause", got.Stuck, "its Machine mgmt-cp-old-m1 was most likely deleted without it", "cluster-api#14024",
		"clusters.nodeDeletionTimeoutSeconds", "kubectl get machine -n tkg-system mgmt-cp-old-m1", "kubectl delete node mgmt-cp-old")
	if strings.Contains(got.Stuck, "uncordon") || !r.Failed() {
		t.Errorf("stuck %q, failed %v: want the orphan named and the check failed", got.Stuck, r.Failed())
	}
	n = node("wl-md-0-xyz1", false, version)
	n.Spec.Unschedulable = true
	if got := row(t, observe(t, cluster(t, nil, n)), "node wl-md-0-xyz1"); !strings.Contains(got.Stuck, "kubectl uncordon wl-md-0-xyz1") {
		t.Errorf("a cordoned, Ready node: stuck %q, want the uncordon hint", got.Stuck)
	}
}

func TestKubeletVersionMismatchFails(t *testing.T) {
	r := observe(t, cluster(t, nil, node("wl-md-0-xyz1", false, "v1.32.0")))
	got := row(t, r, "node wl-md-0-xyz1")
	if got.Verdict != assert.Mismatch {
		t.Fatalf("verdict %q, want mismatch", got.Verdict)
	}
	asserttest.Says(t, "node row", got.Detail, "kubelet v1.32.0, want v1.33.1")
}

func TestSameVersion(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"v1.33.1+vmware.1", "v1.33.1", true},
		{"v1.33.1", "v1.33.1+vmware.2", true},
		{"1.33.1", "v1.33.1", true},
		{"v1.33.1-rc.1+vmware.1", "v1.33.1-rc.1", true},
		{"v1.33.1-rc.1", "v1.33.1", false},
		{"v1.32.0", "v1.33.1", false},
		{"v1.33.10", "v1.33.1", false},
		{"", "v1.33.1", false},
	} {
		if got := SameVersion(c.a, c.b); got != c.want {
			t.Errorf("SameVersion(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestUnavailableAPIServiceFailsQuotingItsMessage(t *testing.T) {
	for _, c := range []struct{ reason, msg string }{
		{"FailedDiscoveryCheck", `failing or missing response from https://10.96.12.34:443/apis/metrics.k8s.io/v1beta1: bad status from https://10.96.12.34:443/apis/metrics.k8s.io/v1beta1: 503`},
		{"MissingEndpoints", "endpoints for service/metrics-server in \"kube-system\" have no addresses with port name \"https\""},
	} {
		t.Run(c.reason, func(t *testing.T) {
			r := observe(t, cluster(t, nil, newAPIService("v1beta1.metrics.k8s.io", "metrics-server", "False", c.reason, c.msg)))
			got := row(t, r, "APIService v1beta1.metrics.k8s.io")
			if got.Verdict != assert.NotReady || !r.Failed() {
				t.Fatalf("row %+v, want not ready, failing", got)
			}
			asserttest.Says(t, "APIService row", got.Detail, "Available=False ("+c.reason+": "+c.msg+")", "Service kube-system/metrics-server")
			for _, row := range r.Rows() {
				if row.Name == "APIServices" {
					t.Errorf("the all-available row is there with an unavailable APIService: %+v", row)
				}
			}
			asserttest.Says(t, "failure", r.Failure(time.Minute), c.msg)
		})
	}
}

func TestFailPolicyWebhookWithoutReadyEndpointFails(t *testing.T) {
	r := observe(t, cluster(t, nil, slice("capi-system", "capi-webhook-service", false, false)))
	got := row(t, r, "webhook v.capi-webhooks.example.com (ValidatingWebhookConfiguration capi-webhooks)")
	if got.Verdict != assert.NotReady || !r.Failed() {
		t.Fatalf("row %+v, want not ready, failing", got)
	}
	asserttest.Says(t, "webhook row", got.Detail, "Service capi-system/capi-webhook-service has no ready endpoint (2 not ready)", "failurePolicy Fail")
}

func TestFailPolicyWebhookWithoutServiceFails(t *testing.T) {
	c := fakeClient(t, nil, append(append(healthyNodes(), healthyAPIServices()...),
		validating("gone", "gone-system", "gone-webhook", admissionv1.Fail))...)
	r := observe(t, c)
	got := row(t, r, "webhook v.gone.example.com (ValidatingWebhookConfiguration gone)")
	if got.Verdict != assert.Missing {
		t.Fatalf("verdict %q, want missing", got.Verdict)
	}
	asserttest.Says(t, "webhook row", got.Detail, "Service gone-system/gone-webhook does not exist")
}

func TestIgnorePolicyWebhookWithoutEndpointIsShownButPasses(t *testing.T) {
	r := observe(t, cluster(t, nil, validating("optional", "opt-system", "opt-webhook", admissionv1.Ignore), service("opt-system", "opt-webhook")))
	got := row(t, r, "webhook v.optional.example.com (ValidatingWebhookConfiguration optional)")
	if got.Verdict != assert.Degraded || got.Verdict.Status() != assert.Warn {
		t.Fatalf("verdict %q, want degraded (a warning)", got.Verdict)
	}
	if r.Failed() {
		t.Errorf("an Ignore webhook without endpoints fails the check: %s", r.Summary())
	}
	asserttest.Says(t, "webhook row", got.Detail, "no ready endpoint (0 not ready)", "failurePolicy Ignore", "not a failure")
	asserttest.Says(t, "summary", r.Summary(), "1 warning (not failing)")
	asserttest.Says(t, "markdown", r.Markdown(), "! degraded")
}

func TestForbiddenAPIServiceListIsAClearError(t *testing.T) {
	funcs := &interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
		if list.GetObjectKind().GroupVersionKind() == APIServiceListGVK {
			return apierrors.NewForbidden(schema.GroupResource{Group: "apiregistration.k8s.io", Resource: "apiservices"}, "",
				errors.New(`User "e2e" cannot list resource "apiservices" in API group "apiregistration.k8s.io" at the cluster scope`))
		}
		return c.List(ctx, list, opts...)
	}}
	r := observe(t, cluster(t, funcs))
	got := row(t, r, "APIServices")
	if got.Verdict != assert.Error || !r.Failed() {
		t.Fatalf("row %+v, want an error that fails", got)
	}
	asserttest.Says(t, "APIServices row", got.Detail, "listing APIServices (apiregistration.k8s.io/v1) is forbidden", `User "e2e" cannot list`, "needs list on them")
	// The other sections are still judged.
	if row(t, r, "nodes").Verdict != assert.OK {
		t.Error("nodes not judged next to an unreadable section")
	}
}

func TestUnservedAPIServiceKindIsAClearError(t *testing.T) {
	// The fake client lists kinds it cannot map as empty; a real client's
	// discovery-backed REST mapper answers with this.
	c := cluster(t, &interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
		if list.GetObjectKind().GroupVersionKind() == APIServiceListGVK {
			return &meta.NoKindMatchError{GroupKind: apiServiceGVK.GroupKind(), SearchedVersions: []string{"v1"}}
		}
		return c.List(ctx, list, opts...)
	}})
	r := observe(t, c)
	got := row(t, r, "APIServices")
	if got.Verdict != assert.Error {
		t.Fatalf("row %+v, want an error", got)
	}
	asserttest.Says(t, "APIServices row", got.Detail, "the API server does not serve APIServices (apiregistration.k8s.io/v1)")
}

// A list that fails for a reason polling may fix is retried, not reported.
func TestTransientReadErrorIsRetried(t *testing.T) {
	funcs := &interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
		return apierrors.NewServiceUnavailable("the API server is restarting")
	}}
	p, _ := NewCheck(expectOneTwo).Plan(target(cluster(t, funcs)), assert.Options{Timeout: time.Second})
	if _, err := p.Observe(context.Background()); err == nil {
		t.Error("a 503 on listing nodes was not returned for retry")
	}
}

func TestPlan(t *testing.T) {
	c := cluster(t, nil)
	if p, err := NewCheck(func(assert.Target) (Expectation, bool) { return Expectation{}, false }).Plan(target(c), assert.Options{}); p != nil || err != nil {
		t.Errorf("a target that is not the check's concern: %v, %v", p, err)
	}
	if _, err := NewCheck(func(assert.Target) (Expectation, bool) { return Expectation{WorkerNodes: 2}, true }).Plan(target(c), assert.Options{}); err == nil {
		t.Error("an expectation without control plane nodes accepted")
	}
	if _, err := NewCheck(nil).Plan(target(c), assert.Options{}); err == nil {
		t.Error("a check without an expectation func accepted")
	}
}

// The engine waits through a NotReady node and its error names the node and
// the reason, so the stage's failure needs no kubectl to explain.
func TestCheckTargetTimesOutNamingTheNotReadyNode(t *testing.T) {
	c := cluster(t, nil, node("wl-md-0-xyz2", false, version, kubeletStopped))
	rep, err := assert.CheckTarget(context.Background(), NewCheck(expectOneTwo), target(c),
		assert.Options{Timeout: 150 * time.Millisecond, Interval: 20 * time.Millisecond, Progress: asserttest.Log{T: t}})
	var failed *assert.FailedError
	if !errors.As(err, &failed) || failed.Report != rep {
		t.Fatalf("want *assert.FailedError carrying the report, got %v", err)
	}
	asserttest.Says(t, "error", err.Error(), `health check of the workload cluster "wl" failed after`,
		"node wl-md-0-xyz2: not ready", "NodeStatusUnknown: Kubelet stopped posting node status.")
}

func TestRunWritesReportAndFailsNamingTheNode(t *testing.T) {
	w, err := artifacts.New(artifacts.Options{Root: t.TempDir(), MaxFileSize: artifacts.DefaultMaxFileSize})
	if err != nil {
		t.Fatal(err)
	}
	bad := cluster(t, nil, node("wl-md-0-xyz2", false, version, kubeletStopped))
	out, err := assert.Run(context.Background(), NewCheck(expectOneTwo), []assert.Target{target(bad)}, w,
		assert.Options{Timeout: 100 * time.Millisecond, Interval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if out.Err() == nil {
		t.Fatal("Run passed a cluster with a NotReady node")
	}
	asserttest.Says(t, "outcome", out.Err().Error(), `workload cluster "wl": 1 problem: node wl-md-0-xyz2 not ready`,
		"| node wl-md-0-xyz2 | ✗ not ready |", "NodeStatusUnknown")
	if out.HTMLPath == "" || out.MarkdownPath == "" {
		t.Errorf("files not written: %+v", out)
	}
}

func TestNodeTheCloudProviderHasNotInitializedFails(t *testing.T) {
	n := node("wl-md-0-xyz1", false, version)
	n.Spec.Taints = []corev1.Taint{{Key: "node.cloudprovider.kubernetes.io/uninitialized", Value: "true", Effect: corev1.TaintEffectNoSchedule}}
	r := observe(t, cluster(t, nil, n))
	asserttest.Says(t, "node row", row(t, r, "node wl-md-0-xyz1").Detail, "not initialized by the cloud provider", "CPI")
	if !r.Failed() {
		t.Error("a node its cloud provider never initialized passes")
	}
}
