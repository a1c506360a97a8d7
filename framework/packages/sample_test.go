package packages

import (
	"context"
	"strings"
	"testing"
	"time"

	pkgv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	dpv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestSamplePackagesAreSelfContained(t *testing.T) {
	for _, p := range SamplePackages("busybox:9.9") {
		meta, pkg := p.Objects("ns")
		if meta.Name != p.RefName || pkg.Name != p.RefName+"."+p.Version || pkg.Spec.RefName != p.RefName {
			t.Errorf("%s: names %s / %s", p.RefName, meta.Name, pkg.Name)
		}
		spec := pkg.Spec.Template.Spec
		if len(spec.Fetch) != 1 || spec.Fetch[0].Inline == nil || len(spec.Fetch[0].Inline.Paths) == 0 {
			t.Errorf("%s: want a single inline fetch (no registry, no git in the kapp-controller image): %+v", p.RefName, spec.Fetch)
		}
		if len(spec.Template) != 1 || spec.Template[0].Ytt == nil || len(spec.Deploy) != 1 || spec.Deploy[0].Kapp == nil {
			t.Errorf("%s: want ytt + kapp", p.RefName)
		}
	}
	busybox := SamplePackages("busybox:9.9")[1].Files
	if !strings.Contains(busybox["values.yml"], `image: "busybox:9.9"`) || !strings.Contains(busybox["deployment.yml"], "imagePullPolicy: IfNotPresent") {
		t.Errorf("busybox package must use the given image with IfNotPresent: %v", busybox)
	}
	if !strings.Contains(SamplePackages("")[1].Files["values.yml"], SampleImage) {
		t.Errorf("default image is not %s", SampleImage)
	}
}

func TestInstallSamplePackagesCreatesEverything(t *testing.T) {
	c := fakeClient(t)
	in := SampleInput{Client: c, Namespace: "pk", Timeout: time.Second, Interval: 10 * time.Millisecond}
	for range 2 { // idempotent: a second install updates in place
		if err := InstallSamplePackages(context.Background(), in); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	var rb rbacv1.RoleBinding
	if err := c.Get(ctx, client.ObjectKey{Namespace: "pk", Name: SampleServiceAccount}, &rb); err != nil || rb.Subjects[0].Name != SampleServiceAccount {
		t.Errorf("role binding: %v %+v", err, rb.Subjects)
	}
	var pkgs dpv1alpha1.PackageList
	if err := c.List(ctx, &pkgs, client.InNamespace("pk")); err != nil || len(pkgs.Items) != 2 {
		t.Errorf("packages: %v %d", err, len(pkgs.Items))
	}
	for _, want := range SampleInstalls() {
		var p pkgv1alpha1.PackageInstall
		if err := c.Get(ctx, client.ObjectKey{Namespace: "pk", Name: want.Name}, &p); err != nil {
			t.Fatal(err)
		}
		if p.Spec.ServiceAccountName != SampleServiceAccount || p.Spec.PackageRef.RefName != want.RefName ||
			p.Spec.PackageRef.VersionSelection.Constraints != want.Version {
			t.Errorf("%s: spec %+v", want.Name, p.Spec)
		}
	}
}
