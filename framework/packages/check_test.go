package packages

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	kcv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	pkgv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// The glue between the API and judge, with a fake client; the real-cluster
// tests (real_test.go) prove it against kapp-controller.

func fakeClient(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	s, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).WithStatusSubresource(&pkgv1alpha1.PackageInstall{}).Build()
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
	r, err := Check(context.Background(), CheckInput{Client: c, Cluster: "wl", Role: "workload",
		Expected: []Expected{{Name: "wl-antrea", Namespace: "tkg-system"}}, Timeout: 3 * time.Second, Interval: 20 * time.Millisecond})
	if err != nil {
		t.Fatalf("a PackageInstall that recovers must pass: %v", err)
	}
	if r.Results[0].Verdict != VerdictOK {
		t.Errorf("verdict %q", r.Results[0].Verdict)
	}
}

func TestCheckReportsLastStateAtDeadline(t *testing.T) {
	c := fakeClient(t,
		pkgi("good", 1, 1, "1.0.0", "", cond(kcv1alpha1.ReconcileSucceeded, "")),
		pkgi("bad", 1, 1, "", yttUseful, cond(kcv1alpha1.ReconcileFailed, yttError)))
	r, err := Check(context.Background(), CheckInput{Client: c, Cluster: "wl", Role: "workload", Timeout: 150 * time.Millisecond, Interval: 20 * time.Millisecond,
		Expected: []Expected{
			{Name: "good", Namespace: "tkg-system"},
			{Name: "bad", Namespace: "tkg-system"},
			{Name: "gone", Namespace: "tkg-system"},
			{Name: "opt", Namespace: "tkg-system", Optional: true},
			{Name: "wl-kapp-controller", Namespace: "default", Location: OnManagement},
		}})
	var failed *FailedError
	if !errors.As(err, &failed) || failed.Report != r {
		t.Fatalf("want *FailedError carrying the report, got %v", err)
	}
	want := []Verdict{VerdictOK, VerdictFailed, VerdictMissing, VerdictAbsent, VerdictSkipped}
	for i, v := range want {
		if r.Results[i].Verdict != v {
			t.Errorf("result %d (%s): %q, want %q", i, r.Results[i].Expected.Name, r.Results[i].Verdict, v)
		}
	}
	for _, s := range []string{"did not reconcile within", "struct has no .does_not_exist", "tkg-system/gone missing", "no ManagementClient"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error lacks %q:\n%v", s, err)
		}
	}
}

func TestCheckUsesManagementClientForManagementEntries(t *testing.T) {
	wl := fakeClient(t)
	mgmt := fakeClient(t, func() client.Object {
		p := pkgi("wl-kapp-controller", 1, 1, "0.41.5+vmware.1", "", cond(kcv1alpha1.ReconcileSucceeded, ""))
		p.Namespace = "default"
		return p
	}())
	_, err := Check(context.Background(), CheckInput{Client: wl, ManagementClient: mgmt, Timeout: time.Second, Interval: 10 * time.Millisecond,
		Expected: []Expected{{Name: "wl-kapp-controller", Namespace: "default", Location: OnManagement, Version: ">=0.41.5"}}})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCheckRejectsBadInput(t *testing.T) {
	c := fakeClient(t)
	plain := fake.NewClientBuilder().WithScheme(runtime.NewScheme()).Build()
	e := []Expected{{Name: "x", Namespace: "y"}}
	for name, in := range map[string]CheckInput{
		"no client":          {Expected: e, Timeout: time.Second},
		"nothing expected":   {Client: c, Timeout: time.Second},
		"no timeout":         {Client: c, Expected: e},
		"scheme lacks types": {Client: plain, Expected: e, Timeout: time.Second},
	} {
		if _, err := Check(context.Background(), in); err == nil {
			t.Errorf("%s: accepted", name)
		} else if name == "scheme lacks types" && !strings.Contains(err.Error(), "packages.NewClient") {
			t.Errorf("scheme error does not say how to fix it: %v", err)
		}
	}
}
