package packages

import (
	"errors"
	"strings"
	"testing"

	versions "carvel.dev/vendir/pkg/vendir/versions/v1alpha1"
	kcv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	pkgv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tkg-e2e/harness/framework/assert"
	"github.com/tkg-e2e/harness/framework/assert/asserttest"
)

// Status shapes as kapp-controller v0.51.0 writes them.

const (
	yttError  = "Error (see .status.usefulErrorMessage for details)"
	yttUseful = "ytt: Error: \n- struct has no .does_not_exist field or method\n    in <toplevel>\n      bad.yml:3 | value: #@ data.values.does_not_exist\n"
	noVersion = "Expected to find at least one version, but did not (details: all=0 -> after-prereleases-filter=0 -> after-kapp-controller-version-check=0 -> after-constraints-filter=0)"
)

func pkgi(name string, gen, observed int64, version, useful string, conds ...kcv1alpha1.Condition) *pkgv1alpha1.PackageInstall {
	return &pkgv1alpha1.PackageInstall{
		ObjectMeta: metav1.ObjectMeta{Namespace: "tkg-system", Name: name, Generation: gen},
		Spec: pkgv1alpha1.PackageInstallSpec{PackageRef: &pkgv1alpha1.PackageRef{
			RefName: "antrea.tanzu.vmware.com", VersionSelection: &versions.VersionSelectionSemver{Constraints: "1.7.2+vmware.1-tkg.1-advanced-rc.2"}}},
		Status: pkgv1alpha1.PackageInstallStatus{
			GenericStatus: kcv1alpha1.GenericStatus{ObservedGeneration: observed, Conditions: conds, UsefulErrorMessage: useful,
				FriendlyDescription: "friendly"},
			Version: version, LastAttemptedVersion: version,
		},
	}
}

func cond(t kcv1alpha1.ConditionType, msg string) kcv1alpha1.Condition {
	return kcv1alpha1.Condition{Type: t, Status: corev1.ConditionTrue, Message: msg}
}

func TestInterpret(t *testing.T) {
	deleting := pkgi("x", 1, 1, "", "", cond(kcv1alpha1.Deleting, ""))
	now := metav1.Now()
	deleting.DeletionTimestamp = &now
	paused := pkgi("x", 1, 1, "", "", cond(kcv1alpha1.Reconciling, ""))
	paused.Spec.Paused = true

	cases := []struct {
		name  string
		p     *pkgv1alpha1.PackageInstall
		phase Phase
		msg   string
	}{
		{"succeeded", pkgi("x", 1, 1, "1.7.2+vmware.1", "", cond(kcv1alpha1.ReconcileSucceeded, "")), PhaseSucceeded, ""},
		{"failed ytt: usefulErrorMessage wins", pkgi("x", 1, 1, "", yttUseful, cond(kcv1alpha1.ReconcileFailed, yttError)), PhaseFailed, "struct has no .does_not_exist"},
		{"missing version: condition message", pkgi("x", 1, 1, "", "", cond(kcv1alpha1.ReconcileFailed, noVersion)), PhaseFailed, "Expected to find at least one version"},
		{"reconciling", pkgi("x", 1, 1, "", "", cond(kcv1alpha1.Reconciling, "")), PhaseReconciling, "friendly"},
		{"no conditions", pkgi("x", 1, 0, "", ""), PhasePending, "status describes generation 0"},
		{"no conditions, observed", pkgi("x", 1, 1, "", ""), PhasePending, "no condition yet"},
		{"stale success", pkgi("x", 2, 1, "1.0.0", "", cond(kcv1alpha1.ReconcileSucceeded, "")), PhasePending, "generation 1, spec is at generation 2"},
		{"deleting", deleting, PhaseDeleting, "friendly"},
		{"paused", paused, PhaseReconciling, "spec.paused=true"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := Interpret(tc.p)
			if st.Phase != tc.phase || !strings.Contains(st.Message, tc.msg) {
				t.Errorf("got phase %q message %q, want %q containing %q", st.Phase, st.Message, tc.phase, tc.msg)
			}
			if st.PackageRef != "antrea.tanzu.vmware.com" || st.VersionSelection == "" {
				t.Errorf("spec not carried: %+v", st)
			}
		})
	}
}

func TestJudge(t *testing.T) {
	gr := schema.GroupResource{Group: "packaging.carvel.dev", Resource: "packageinstalls"}
	e := Expected{Name: "wl-antrea", Namespace: "tkg-system", PackageRef: "antrea.tanzu.vmware.com", Version: ">=1.7.2", Location: OnSelf}
	ok := pkgi("wl-antrea", 1, 1, "1.7.2+vmware.1-tkg.1-advanced-rc.2", "", cond(kcv1alpha1.ReconcileSucceeded, ""))
	cases := []struct {
		name    string
		e       Expected
		p       *pkgv1alpha1.PackageInstall
		err     error
		verdict assert.Verdict
		problem string
	}{
		{"ok (build metadata ignored by the constraint)", e, ok, nil, assert.OK, ""},
		{"missing", e, nil, apierrors.NewNotFound(gr, "wl-antrea"), assert.Missing, "PackageInstall tkg-system/wl-antrea does not exist on the self cluster"},
		{"optional absent", Expected{Name: "p", Namespace: "n", Optional: true}, nil, apierrors.NewNotFound(gr, "p"), assert.Absent, "optional"},
		{"no kapp-controller", e, nil, &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "packaging.carvel.dev", Kind: "PackageInstall"}}, assert.Error, "is kapp-controller installed?"},
		{"read error", e, nil, errors.New("connection refused"), assert.Error, "connection refused"},
		{"failed", e, pkgi("wl-antrea", 1, 1, "", yttUseful, cond(kcv1alpha1.ReconcileFailed, yttError)), nil, assert.Failed, "does_not_exist"},
		{"reconciling", e, pkgi("wl-antrea", 1, 1, "", "", cond(kcv1alpha1.Reconciling, "")), nil, assert.NotReconciled, "Reconciling"},
		{"wrong package", Expected{Name: "wl-antrea", Namespace: "tkg-system", PackageRef: "calico.tanzu.vmware.com"}, ok, nil, assert.Mismatch, `want "calico.tanzu.vmware.com"`},
		{"old version", Expected{Name: "wl-antrea", Namespace: "tkg-system", Version: ">=1.8.0"}, ok, nil, assert.Mismatch, `does not satisfy ">=1.8.0"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := judge(tc.e, tc.p, tc.err)
			if r.Verdict != tc.verdict || !strings.Contains(r.Problem, tc.problem) {
				t.Errorf("got %q %q, want %q containing %q", r.Verdict, r.Problem, tc.verdict, tc.problem)
			}
		})
	}
}

func TestMarkdownShowsUsefulErrorOrConditionMessage(t *testing.T) {
	r := &Report{Cluster: "kind", Role: "workload", Results: []Result{
		judge(Expected{Name: "good", Namespace: "ns"}, pkgi("good", 1, 1, "1.0.0", "", cond(kcv1alpha1.ReconcileSucceeded, "")), nil),
		judge(Expected{Name: "bad-ytt", Namespace: "ns"}, pkgi("bad-ytt", 1, 1, "", yttUseful, cond(kcv1alpha1.ReconcileFailed, yttError)), nil),
		judge(Expected{Name: "no-version", Namespace: "ns"}, pkgi("no-version", 1, 1, "", "", cond(kcv1alpha1.ReconcileFailed, noVersion)), nil),
		judge(Expected{Name: "gone", Namespace: "ns"}, nil, apierrors.NewNotFound(schema.GroupResource{}, "gone")),
		{Expected: Expected{Name: "kc", Namespace: "default", Location: OnManagement}, Verdict: assert.SkippedVerdict, Problem: "no ManagementClient"},
	}}
	md := r.Markdown()
	t.Log("\n" + md)
	asserttest.Says(t, "markdown", md,
		"## Packages on the workload cluster kind: FAILED",
		"1/5 PackageInstalls ReconcileSucceeded",
		"| good | ns | self | antrea.tanzu.vmware.com | 1.0.0 | ReconcileSucceeded | ✓ ok |",
		"### ✗ ns/bad-ytt: failed",
		"- condition ReconcileFailed=True: "+yttError,
		"- status.usefulErrorMessage:",
		"  - struct has no .does_not_exist field or method",
		"### ✗ ns/no-version: failed",
		"status.usefulErrorMessage is empty; the cause is the condition message:",
		"  "+noVersion,
		"### ✗ ns/gone: missing",
		"### – default/kc: skipped",
		"version selection `1.7.2+vmware.1-tkg.1-advanced-rc.2`",
	)
}
