package packages

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tkg-e2e/harness/framework/assert/asserttest"
)

func crdObject() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(crdGVK)
	u.SetName(ClusterBootstrapCRD)
	return u
}

func clusterBootstrap(ns, name string, conds ...map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(ClusterBootstrapGVK)
	u.SetNamespace(ns)
	u.SetName(name)
	list := make([]any, len(conds))
	for i, c := range conds {
		list[i] = c
	}
	_ = unstructured.SetNestedSlice(u.Object, list, "status", "conditions")
	return u
}

func cbCond(typ, status, msg string) map[string]any {
	return map[string]any{"type": typ, "status": status, "message": msg}
}

func packagesReport(phases map[string]Phase) *Report {
	r := &Report{Cluster: "wl", Role: "workload"}
	for _, name := range []string{"wl-kapp-controller", "wl-antrea", "wl-vsphere-csi", "tkg-pkg"} {
		if ph, ok := phases[name]; ok {
			r.Results = append(r.Results, Result{Expected: Expected{Name: name, Namespace: "tkg-system"}, State: State{Phase: ph}})
		}
	}
	return r
}

func TestClusterBootstrapSkippedWithoutCRD(t *testing.T) {
	r := packagesReport(map[string]Phase{"wl-antrea": PhaseSucceeded})
	res, err := CheckClusterBootstrap(context.Background(), BootstrapInput{ManagementClient: fakeClient(t),
		ClusterName: "wl", ClusterNamespace: "default", Packages: r, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Skipped || !strings.Contains(res.SkipReason, "CRD clusterbootstraps.run.tanzu.vmware.com is not installed") {
		t.Fatalf("want skipped with the reason, got %+v", res)
	}
	if res.Failed() || r.ClusterBootstrap != res {
		t.Errorf("a skipped check is neither failed nor missing from the report")
	}
	if md := r.Markdown(); !strings.Contains(md, "### ClusterBootstrap default/wl: – skipped") {
		t.Errorf("the package report must say the check was skipped:\n%s", md)
	}
}

func TestClusterBootstrapMirrors(t *testing.T) {
	// Condition types as TKG writes them: strings.Title(short name) + "-" + condition type.
	c := fakeClient(t, crdObject(), clusterBootstrap("default", "wl",
		cbCond("Kapp-Controller-ReconcileSucceeded", "True", ""),
		cbCond("Antrea-ReconcileSucceeded", "True", ""),
		cbCond("Vsphere-Csi-ReconcileSucceeded", "True", "")))
	r := packagesReport(map[string]Phase{"wl-kapp-controller": PhaseSucceeded, "wl-antrea": PhaseSucceeded, "wl-vsphere-csi": PhaseSucceeded, "tkg-pkg": PhaseSucceeded})
	res, err := CheckClusterBootstrap(context.Background(), BootstrapInput{ManagementClient: c, ClusterName: "wl", ClusterNamespace: "default",
		Packages: r, Timeout: time.Second, Interval: 10 * time.Millisecond})
	if err != nil || res.Failed() || len(res.Conditions) != 3 {
		t.Fatalf("err=%v result=%+v", err, res)
	}
}

func TestClusterBootstrapMismatch(t *testing.T) {
	c := fakeClient(t, crdObject(), clusterBootstrap("default", "wl",
		cbCond("Antrea-ReconcileFailed", "True", "ytt: Error: boom")))
	r := packagesReport(map[string]Phase{"wl-antrea": PhaseSucceeded, "wl-vsphere-csi": PhaseFailed})
	res, err := CheckClusterBootstrap(context.Background(), BootstrapInput{ManagementClient: c, ClusterName: "wl", ClusterNamespace: "default",
		Packages: r, Timeout: 100 * time.Millisecond, Interval: 10 * time.Millisecond})
	if err == nil || !res.Failed() {
		t.Fatalf("want a mismatch failure, got %v %+v", err, res)
	}
	asserttest.Says(t, "error", err.Error(),
		"PackageInstall tkg-system/wl-antrea is ReconcileSucceeded, ClusterBootstrap says Antrea-ReconcileFailed=True ytt: Error: boom",
		"PackageInstall tkg-system/wl-vsphere-csi is ReconcileFailed, ClusterBootstrap has no vsphere-csi-ReconcileFailed condition",
		"| Antrea-ReconcileFailed | True |",
	)
}

func TestClusterBootstrapMissingObject(t *testing.T) {
	c := fakeClient(t, crdObject())
	r := packagesReport(map[string]Phase{"wl-antrea": PhaseSucceeded})
	_, err := CheckClusterBootstrap(context.Background(), BootstrapInput{ManagementClient: c, ClusterName: "wl", ClusterNamespace: "default",
		Packages: r, Timeout: 50 * time.Millisecond, Interval: 10 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("err = %v", err)
	}
}
