package packages

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

	pkgv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/tkg-e2e/harness/framework/assert"
	"github.com/tkg-e2e/harness/framework/assert/asserttest"
	"github.com/tkg-e2e/harness/framework/wait"
)

// Real-cluster tests against the cluster HARNESS_TEST_KUBECONFIG points at: a
// kind cluster with kapp-controller v0.51.0 and busybox:1.35.0 loaded
// (scripts/test-assertions-real.sh). Each test works in its own namespace.

const (
	// apply covers kapp-controller's aggregated API still warming up.
	apply = time.Minute
	// reconcile: a good PackageInstall succeeds in 2–8 s on an idle cluster
	// (FACTS); the busybox Deployment adds its rollout.
	reconcile = 2 * time.Minute
	// failWindow is how long a PackageInstall known to be broken is polled:
	// long enough for kapp-controller to fetch and template it at least once.
	// 20 s was not, on a 2-core machine with both cores 97% busy (CI,
	// 2026-11-28): every poll's API call of the missing-package test timed
	// out inside the window, and the check saw only errors.
	failWindow = 40 * time.Second
	cleanup    = 2 * time.Minute
)

func connect(t *testing.T) client.Client {
	return asserttest.Connect(t, SampleImage).Client
}

// check waits for the expected PackageInstalls of the kind cluster, as a
// workload cluster named cluster.
func check(t *testing.T, c client.Client, cluster string, expected []Expected, timeout time.Duration, progress io.Writer) (*Report, error) {
	t.Helper()
	start := time.Now()
	r, err := assert.CheckTarget(context.Background(), listOf(assert.Workload, expected...), target(assert.Workload, cluster, c),
		assert.Options{Timeout: timeout, Interval: time.Second, Progress: progress})
	t.Logf("check returned after %s:\n%v", time.Since(start).Round(time.Millisecond), err)
	if r == nil {
		t.Fatalf("no report: %v", err)
	}
	return r.(*Report), err
}

// uninstall deletes the namespace's PackageInstalls, waits until
// kapp-controller has removed what they deployed, then deletes the
// namespace: deleting it first would also delete the service account
// kapp-controller needs to undeploy, and leave it stuck Terminating.
func uninstall(t *testing.T, c client.Client, ns string) {
	ctx := context.Background()
	if err := c.DeleteAllOf(ctx, &pkgv1alpha1.PackageInstall{}, client.InNamespace(ns)); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("deleting PackageInstalls in %s: %v", ns, err)
		return
	}
	err := wait.For(ctx, wait.Options{What: "PackageInstalls in namespace " + ns + " deleted", Timeout: cleanup, Progress: asserttest.Log{T: t}},
		func(ctx context.Context) (bool, string, error) {
			var list pkgv1alpha1.PackageInstallList
			err := c.List(ctx, &list, client.InNamespace(ns))
			return err == nil && len(list.Items) == 0, fmt.Sprintf("%d left", len(list.Items)), err
		})
	if err == nil {
		err = client.IgnoreNotFound(c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	}
	if err != nil {
		t.Errorf("cleanup of %s: %v", ns, err)
	}
}

// install puts packages and installs into a fresh namespace and removes them
// (PackageInstalls first, so kapp-controller can undeploy) when the test ends.
func install(t *testing.T, c client.Client, prefix string, pkgs []InlinePackage, installs []Install) string {
	t.Helper()
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	ns := prefix + "-" + hex.EncodeToString(b)
	t.Cleanup(func() {
		start := time.Now()
		uninstall(t, c, ns)
		t.Logf("uninstalled %s in %s", ns, time.Since(start).Round(time.Millisecond))
	})
	start := time.Now()
	err := InstallPackages(context.Background(), InstallInput{Client: c, Namespace: ns, ServiceAccount: "installer",
		Packages: pkgs, Installs: installs, Timeout: apply, Progress: asserttest.Log{T: t}, Prefix: "[install]"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("applied %d packages and %d installs into %s in %s", len(pkgs), len(installs), ns, time.Since(start).Round(time.Millisecond))
	return ns
}

func expectations(ns string, installs []Install) []Expected {
	var out []Expected
	for _, i := range installs {
		out = append(out, Expected{Name: i.Name, Namespace: ns, PackageRef: i.RefName, Version: i.Version, Location: OnSelf})
	}
	return out
}

func TestRealSamplePackagesReconcile(t *testing.T) {
	c := connect(t)
	ns := install(t, c, "pkg-ok", SamplePackages(SampleImage), SampleInstalls())
	r, err := check(t, c, "kind", expectations(ns, SampleInstalls()), reconcile, asserttest.Log{T: t})
	if err != nil {
		t.Fatalf("the sample package set must reconcile:\n%v", err)
	}
	t.Logf("all ReconcileSucceeded: %s", r.Summary())

	// What the packages deployed is really there.
	var cm corev1.ConfigMap
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "harness-sample-config"}, &cm); err != nil || cm.Data["greeting"] != "hello from a harness package" {
		t.Errorf("ConfigMap from the config package: %v %v", err, cm.Data)
	}
	var d appsv1.Deployment
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "harness-sample-busybox"}, &d); err != nil || d.Status.AvailableReplicas != 1 {
		t.Errorf("Deployment from the busybox package: %v available=%d", err, d.Status.AvailableReplicas)
	}
}

// A package whose ytt fails: the report must carry usefulErrorMessage.
func TestRealBadYttReportsUsefulErrorMessage(t *testing.T) {
	c := connect(t)
	bad := InlinePackage{RefName: "bad-ytt.samples.harness.tkg-e2e.dev", Version: "1.0.0", Files: map[string]string{
		"bad.yml": "#@ load(\"@ytt:data\", \"data\")\n---\nvalue: #@ data.values.does_not_exist\n",
	}}
	installs := []Install{{Name: "harness-bad-ytt", RefName: bad.RefName, Version: ">=1.0.0"}}
	ns := install(t, c, "pkg-badytt", []InlinePackage{bad}, installs)
	r, err := check(t, c, "kind", expectations(ns, installs), failWindow, nil)
	var failed *assert.FailedError
	if !errors.As(err, &failed) {
		t.Fatalf("want a package failure, got %v", err)
	}
	res := r.Results[0]
	if res.Verdict != assert.Failed || res.State.UsefulErrorMessage == "" {
		t.Fatalf("want ReconcileFailed with usefulErrorMessage, got %q %+v", res.Verdict, res.State)
	}
	asserttest.Says(t, "failure message", err.Error(), "### ✗ "+ns+"/harness-bad-ytt: failed", "status.usefulErrorMessage:", "does_not_exist",
		"package `bad-ytt.samples.harness.tkg-e2e.dev`")
}

// A PackageInstall of a package that does not exist, one of a version that
// does not exist (usefulErrorMessage stays empty there, FACTS), and a
// PackageInstall that does not exist at all.
func TestRealMissingPackageAndMissingPackageInstall(t *testing.T) {
	c := connect(t)
	installs := []Install{
		{Name: "harness-no-such-package", RefName: "absent.samples.harness.tkg-e2e.dev", Version: ">=1.0.0"},
		{Name: "harness-no-such-version", RefName: SampleConfigRef, Version: ">=2.0.0"},
	}
	ns := install(t, c, "pkg-missing", SamplePackages(SampleImage)[:1], installs)
	expected := append(expectations(ns, installs), Expected{Name: "harness-never-created", Namespace: ns, Location: OnSelf})
	r, err := check(t, c, "kind", expected, failWindow, nil)
	if err == nil {
		t.Fatal("want a failure")
	}
	noPkg, noVersion, never := r.Results[0], r.Results[1], r.Results[2]
	for _, res := range []Result{noPkg, noVersion} {
		if res.Verdict != assert.Failed || res.State.Message == "" {
			t.Errorf("%s: %q %+v", res.Expected.Name, res.Verdict, res.State)
		}
		if !strings.Contains(err.Error(), res.State.Message) {
			t.Errorf("failure message lacks the cause %q", res.State.Message)
		}
	}
	if noVersion.State.UsefulErrorMessage != "" || !strings.Contains(err.Error(), "status.usefulErrorMessage is empty; the cause is the condition message") {
		t.Errorf("missing version: usefulErrorMessage %q; the report must give the condition message", noVersion.State.UsefulErrorMessage)
	}
	if never.Verdict != assert.Missing || !strings.Contains(err.Error(), ns+"/harness-never-created missing") {
		t.Errorf("missing PackageInstall: %q", never.Verdict)
	}
}

// On kind there is no ClusterBootstrap API: the check is skipped with a
// reason, not passed.
func TestRealClusterBootstrapSkippedWithoutCRD(t *testing.T) {
	c := connect(t)
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(crdGVK)
	if err := c.Get(context.Background(), client.ObjectKey{Name: ClusterBootstrapCRD}, crd); err == nil {
		t.Skip("this cluster has the ClusterBootstrap CRD (a TKG management cluster?): the skip path cannot be tested here")
	}
	r := &Report{Cluster: "kind", Role: "workload"}
	res, err := CheckClusterBootstrap(context.Background(), BootstrapInput{ManagementClient: c, ClusterName: "kind", ClusterNamespace: "default",
		Packages: r, Timeout: failWindow})
	if err != nil || !res.Skipped || res.Failed() {
		t.Fatalf("want skipped, got %v %+v", err, res)
	}
	t.Logf("skip reason: %s", res.SkipReason)
}

// With a ClusterBootstrap CRD installed (a minimal stand-in for TKG's), the
// mirror check reads the real object through the API server: a status that
// mirrors the PackageInstalls passes, one that does not fails.
func TestRealClusterBootstrapMirror(t *testing.T) {
	c := connect(t)
	ctx := context.Background()
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(standInCRD), &crd.Object); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, crd); err != nil {
		if apierrors.IsAlreadyExists(err) {
			t.Skip("a ClusterBootstrap CRD exists already; not replacing it with the test stand-in")
		}
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Delete(ctx, crd); err != nil {
			t.Errorf("deleting the stand-in CRD: %v", err)
		}
	})
	// The sample PackageInstalls are named harness-sample-<short>, as TKG names
	// <cluster>-<short>, so the cluster is "harness-sample".
	ns := install(t, c, "pkg-cb", SamplePackages(SampleImage), SampleInstalls())
	r, err := check(t, c, "harness-sample", expectations(ns, SampleInstalls()), reconcile, nil)
	if err != nil {
		t.Fatal(err)
	}

	cb := &unstructured.Unstructured{}
	cb.SetGroupVersionKind(ClusterBootstrapGVK)
	cb.SetNamespace(ns)
	cb.SetName("harness-sample")
	// The API server serves the new kind only once the CRD is established.
	err = wait.For(ctx, wait.Options{What: "stand-in ClusterBootstrap created", Timeout: apply, Interval: time.Second},
		func(ctx context.Context) (bool, string, error) {
			err := c.Create(ctx, cb.DeepCopy())
			if err == nil || apierrors.IsAlreadyExists(err) {
				return true, "", nil
			}
			return false, "", err
		})
	if err != nil {
		t.Fatal(err)
	}
	setConditions := func(conds ...map[string]any) {
		t.Helper()
		if err := c.Get(ctx, client.ObjectKeyFromObject(cb), cb); err != nil {
			t.Fatal(err)
		}
		list := make([]any, len(conds))
		for i := range conds {
			list[i] = conds[i]
		}
		if err := unstructured.SetNestedSlice(cb.Object, list, "status", "conditions"); err != nil {
			t.Fatal(err)
		}
		if err := c.Status().Update(ctx, cb); err != nil {
			t.Fatal(err)
		}
	}

	setConditions(map[string]any{"type": "Config-ReconcileSucceeded", "status": "True"}, map[string]any{"type": "Busybox-ReconcileSucceeded", "status": "True"})
	res, err := CheckClusterBootstrap(ctx, BootstrapInput{ManagementClient: c, ClusterName: "harness-sample", ClusterNamespace: ns, Packages: r, Timeout: failWindow, Interval: time.Second})
	if err != nil || res.Skipped || res.Failed() {
		t.Fatalf("mirroring status must pass: %v %+v", err, res)
	}

	setConditions(map[string]any{"type": "Config-ReconcileSucceeded", "status": "True"},
		map[string]any{"type": "Busybox-ReconcileFailed", "status": "True", "message": "kapp: Error: timed out waiting"})
	start := time.Now()
	res, err = CheckClusterBootstrap(ctx, BootstrapInput{ManagementClient: c, ClusterName: "harness-sample", ClusterNamespace: ns, Packages: r, Timeout: 5 * time.Second, Interval: time.Second})
	t.Logf("mismatch reported after %s:\n%v", time.Since(start).Round(time.Millisecond), err)
	if err == nil || !res.Failed() || !strings.Contains(err.Error(), "harness-sample-busybox is ReconcileSucceeded, ClusterBootstrap says Busybox-ReconcileFailed=True kapp: Error: timed out waiting") {
		t.Fatalf("want the mismatch reported, got %v", err)
	}
}

// standInCRD accepts any ClusterBootstrap with a status subresource; it is
// only as much of TKG's CRD as the mirror check reads.
const standInCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: clusterbootstraps.run.tanzu.vmware.com
  labels: {tkg-e2e.dev/test-stand-in: "true"}
spec:
  group: run.tanzu.vmware.com
  scope: Namespaced
  names: {kind: ClusterBootstrap, listKind: ClusterBootstrapList, plural: clusterbootstraps, singular: clusterbootstrap}
  versions:
  - name: v1alpha3
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`
