package packages

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	kcv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	pkgv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tkg-e2e/harness/framework/artifacts"
	"github.com/tkg-e2e/harness/framework/assert"
	"github.com/tkg-e2e/harness/framework/assert/asserttest"
	"github.com/tkg-e2e/harness/framework/kube"
)

// The glue between the engine and judge, with a fake client; the
// real-cluster tests (real_test.go) prove it against kapp-controller.

// fakeClient knows the kapp-controller types (kube.Scheme) and maps the CRD
// and ClusterBootstrap kinds, which are read as unstructured.
func fakeClient(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	rm := meta.NewDefaultRESTMapper(nil)
	rm.Add(crdGVK, meta.RESTScopeRoot)
	rm.Add(ClusterBootstrapGVK, meta.RESTScopeNamespace)
	return fake.NewClientBuilder().WithScheme(kube.Scheme()).WithRESTMapper(rm).WithObjects(objs...).
		WithStatusSubresource(&pkgv1alpha1.PackageInstall{}).Build()
}

func target(role, name string, c client.Client) assert.Target {
	return assert.Target{Role: role, Name: name, Namespace: "default", Cluster: &kube.Cluster{Client: c}}
}

func listOf(role string, expected ...Expected) *Check {
	return NewCheck(&List{Name: "test", Source: "test.yaml", Roles: map[string][]Expected{role: expected}})
}

// ReconcileFailed is not final: a PackageInstall that fails first and
// succeeds later must pass.
func TestCheckPollsThroughReconcileFailed(t *testing.T) {
	p := pkgi("wl-antrea", 1, 1, "", yttUseful, cond(kcv1alpha1.ReconcileFailed, yttError))
	c := fakeClient(t, p)
	go func() {
		time.Sleep(100 * time.Millisecond)
		cur := &pkgv1alpha1.PackageInstall{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(p), cur); err != nil {
			panic(err)
		}
		cur.Status.Conditions = []kcv1alpha1.Condition{cond(kcv1alpha1.ReconcileSucceeded, "")}
		cur.Status.UsefulErrorMessage = ""
		cur.Status.Version = "1.7.2"
		if err := c.Status().Update(context.Background(), cur); err != nil {
			panic(err)
		}
	}()
	r, err := assert.CheckTarget(context.Background(), listOf(assert.Workload, Expected{Name: "wl-antrea", Namespace: "tkg-system"}),
		target(assert.Workload, "wl", c), assert.Options{Timeout: 3 * time.Second, Interval: 20 * time.Millisecond})
	if err != nil {
		t.Fatalf("a PackageInstall that recovers must pass: %v", err)
	}
	if v := r.(*Report).Results[0].Verdict; v != assert.OK {
		t.Errorf("verdict %q", v)
	}
}

func TestCheckReportsLastStateAtDeadline(t *testing.T) {
	c := fakeClient(t,
		pkgi("good", 1, 1, "1.0.0", "", cond(kcv1alpha1.ReconcileSucceeded, "")),
		pkgi("bad", 1, 1, "", yttUseful, cond(kcv1alpha1.ReconcileFailed, yttError)))
	rep, err := assert.CheckTarget(context.Background(), listOf(assert.Workload,
		Expected{Name: "good", Namespace: "tkg-system"},
		Expected{Name: "bad", Namespace: "tkg-system"},
		Expected{Name: "gone", Namespace: "tkg-system"},
		Expected{Name: "opt", Namespace: "tkg-system", Optional: true},
		Expected{Name: "wl-kapp-controller", Namespace: "default", Location: OnManagement},
	), target(assert.Workload, "wl", c), assert.Options{Timeout: 150 * time.Millisecond, Interval: 20 * time.Millisecond})
	var failed *assert.FailedError
	if !errors.As(err, &failed) || failed.Report != rep {
		t.Fatalf("want *assert.FailedError carrying the report, got %v", err)
	}
	r := rep.(*Report)
	want := []assert.Verdict{assert.OK, assert.Failed, assert.Missing, assert.Absent, assert.SkippedVerdict}
	for i, v := range want {
		if r.Results[i].Verdict != v {
			t.Errorf("result %d (%s): %q, want %q", i, r.Results[i].Expected.Name, r.Results[i].Verdict, v)
		}
	}
	asserttest.Says(t, "error", err.Error(), "did not reconcile within", "struct has no .does_not_exist", "tkg-system/gone missing", "no ManagementClient")
	if got := assert.Count(r.Rows()); got[assert.Pass] != 2 || got[assert.Fail] != 2 || got[assert.Skipped] != 1 {
		t.Errorf("rows by status: %v", got)
	}
}

func TestCheckUsesManagementClientForManagementEntries(t *testing.T) {
	wl := fakeClient(t)
	mgmt := fakeClient(t, func() client.Object {
		p := pkgi("wl-kapp-controller", 1, 1, "0.41.5+vmware.1", "", cond(kcv1alpha1.ReconcileSucceeded, ""))
		p.Namespace = "default"
		return p
	}())
	rep, err := assert.CheckTarget(context.Background(),
		listOf(assert.Workload, Expected{Name: "${CLUSTER_NAME}-kapp-controller", Namespace: "${CLUSTER_NAMESPACE}", Location: OnManagement, Version: ">=0.41.5"}),
		target(assert.Workload, "wl", wl),
		assert.Options{Timeout: time.Second, Interval: 10 * time.Millisecond, Targets: []assert.Target{target(assert.Management, "mgmt", mgmt)}})
	if err != nil {
		t.Fatal(err)
	}
	// The management cluster has no ClusterBootstrap CRD: skipped, with the reason.
	if cb := rep.(*Report).ClusterBootstrap; cb == nil || !cb.Skipped {
		t.Errorf("ClusterBootstrap mirror: %+v, want skipped", cb)
	}
}

func TestCheckRejectsBadInput(t *testing.T) {
	c := fakeClient(t)
	plain := fake.NewClientBuilder().WithScheme(runtime.NewScheme()).Build()
	check := listOf(assert.Workload, Expected{Name: "x", Namespace: "y"})
	opts := assert.Options{Timeout: time.Second}
	for name, tc := range map[string]struct {
		check  *Check
		target assert.Target
		opts   assert.Options
	}{
		"no client":          {check, assert.Target{Role: assert.Workload}, opts},
		"nothing expected":   {listOf(assert.Workload), target(assert.Workload, "wl", c), opts},
		"no timeout":         {check, target(assert.Workload, "wl", c), assert.Options{}},
		"scheme lacks types": {check, target(assert.Workload, "wl", plain), opts},
		"role not listed":    {check, target(assert.Management, "mgmt", c), opts},
		"no list":            {NewCheck(nil), target(assert.Workload, "wl", c), opts},
	} {
		if _, err := assert.CheckTarget(context.Background(), tc.check, tc.target, tc.opts); err == nil {
			t.Errorf("%s: accepted", name)
		} else if name == "scheme lacks types" && !strings.Contains(err.Error(), "kube.Connect") {
			t.Errorf("scheme error does not say how to fix it: %v", err)
		}
	}
}

// Run is what the suite calls: every cluster of a listed role is checked
// (bootstrap is not a role), the workload cluster's ClusterBootstrap mirror
// is reported as skipped without its CRD, and packages.md and packages.html
// are written through the artifacts Writer.
func TestRunChecksEveryClusterAndWritesTheReport(t *testing.T) {
	mgmt := fakeClient(t, pkgi("tkg-pkg", 1, 1, "1.0.0", "", cond(kcv1alpha1.ReconcileSucceeded, "")))
	wl := fakeClient(t)
	l, err := Parse([]byte(`
name: run
roles:
  management: [{name: tkg-pkg, namespace: tkg-system}]
  workload: [{name: "${CLUSTER_NAME}-antrea", namespace: tkg-system}]
`), "run.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w, err := artifacts.New(artifacts.Options{Root: t.TempDir(), MaxFileSize: artifacts.DefaultMaxFileSize})
	if err != nil {
		t.Fatal(err)
	}
	targets := []assert.Target{target("bootstrap", "kind", fakeClient(t)), target(assert.Management, "mgmt", mgmt), target(assert.Workload, "wl", wl)}
	out, err := assert.Run(context.Background(), NewCheck(l), targets, w, assert.Options{Timeout: 100 * time.Millisecond, Interval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Checked) != 2 || len(out.Failures) != 1 || !strings.Contains(out.Failures[0].Error(), `workload cluster "wl": 0/1 PackageInstalls ReconcileSucceeded; tkg-system/wl-antrea missing`) {
		t.Fatalf("want mgmt passing and wl failing, got %d checked, failures %v", len(out.Checked), out.Failures)
	}
	for path, want := range map[string]string{
		out.MarkdownPath: "### ClusterBootstrap default/wl: – skipped",
		out.HTMLPath:     `<td class="skip">– skipped</td>`,
	} {
		b, err := os.ReadFile(path)
		if err != nil || !strings.Contains(string(b), want) {
			t.Errorf("%s: %v, lacks %q:\n%s", path, err, want, b)
		}
	}
	if err := out.Err(); err == nil || !strings.Contains(err.Error(), "## Packages on the management cluster mgmt: PASSED") {
		t.Errorf("the outcome's error must carry every cluster's report: %v", err)
	}
}

// A template error does not heal: kapp-controller renders the same
// templates and values on its next sync. The check ends after its grace,
// with usefulErrorMessage leading the error.
func TestCheckGivesUpOnATemplateErrorAfterTheGrace(t *testing.T) {
	c := fakeClient(t, pkgi("bad", 1, 1, "", yttUseful, cond(kcv1alpha1.ReconcileFailed, yttError)))
	start := time.Now()
	_, err := assert.CheckTarget(context.Background(), listOf(assert.Workload, Expected{Name: "bad", Namespace: "tkg-system"}),
		target(assert.Workload, "wl", c), assert.Options{Timeout: time.Minute, Interval: 20 * time.Millisecond, Grace: 200 * time.Millisecond})
	var failed *assert.FailedError
	if !errors.As(err, &failed) || failed.Cause == "" {
		t.Fatalf("want a FailedError with its cause, got %v", err)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("took %s, want about the grace", took)
	}
	if !strings.HasPrefix(err.Error(), "ReconcileFailed: ytt: Error") || !strings.Contains(strings.SplitN(err.Error(), "\n", 2)[0], "PackageInstall tkg-system/bad") {
		t.Errorf("the first line must start with the cause and name the PackageInstall: %q", err)
	}
}

// In the run's outcome, what the stage's failure message starts with, the
// cause comes first, then the cluster.
func TestRunPutsTheStuckCauseFirst(t *testing.T) {
	wl := fakeClient(t, pkgi("bad", 1, 1, "", yttUseful, cond(kcv1alpha1.ReconcileFailed, yttError)))
	w, err := artifacts.New(artifacts.Options{Root: t.TempDir(), MaxFileSize: artifacts.DefaultMaxFileSize})
	if err != nil {
		t.Fatal(err)
	}
	out, err := assert.Run(context.Background(), listOf(assert.Workload, Expected{Name: "bad", Namespace: "tkg-system"}),
		[]assert.Target{target(assert.Workload, "wl", wl)}, w, assert.Options{Timeout: time.Minute, Interval: 20 * time.Millisecond, Grace: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(out.Err().Error(), "\n")
	if !strings.HasPrefix(first, "ReconcileFailed: ytt: Error") || !strings.Contains(first, `(workload cluster "wl"; gave up after`) {
		t.Errorf("first line %q: want the cause, then the cluster", first)
	}
}
