package packages

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"time"

	versions "carvel.dev/vendir/pkg/vendir/versions/v1alpha1"
	kcv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	pkgv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	dpv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/tkg-e2e/harness/framework/assert"
	"github.com/tkg-e2e/harness/framework/wait"
)

// InlinePackage is a package whose whole content travels in its Package CR
// (fetch: inline), so installing it needs no registry, no git (the
// kapp-controller image has none) and no PackageRepository.
type InlinePackage struct {
	// RefName is the package name, a DNS-like name with at least three segments.
	RefName string
	// Version is a semver version.
	Version     string
	DisplayName string
	// Files are the fetched files (path -> content), templated by ytt: YAML,
	// ytt annotations and a data values schema.
	Files map[string]string
}

// Objects returns the PackageMetadata and Package CRs for namespace ns.
func (p InlinePackage) Objects(ns string) (*dpv1alpha1.PackageMetadata, *dpv1alpha1.Package) {
	meta := &dpv1alpha1.PackageMetadata{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: p.RefName},
		Spec: dpv1alpha1.PackageMetadataSpec{
			DisplayName:      assert.Or(p.DisplayName, p.RefName),
			ShortDescription: "installed by the tkg-e2e harness to check kapp-controller",
			ProviderName:     "tkg-e2e harness",
		},
	}
	pkg := &dpv1alpha1.Package{
		// kapp-controller requires the name <refName>.<version>.
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: p.RefName + "." + p.Version},
		Spec: dpv1alpha1.PackageSpec{
			RefName:    p.RefName,
			Version:    p.Version,
			ReleasedAt: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
			Template: dpv1alpha1.AppTemplateSpec{Spec: &kcv1alpha1.AppSpec{
				Fetch:    []kcv1alpha1.AppFetch{{Inline: &kcv1alpha1.AppFetchInline{Paths: maps.Clone(p.Files)}}},
				Template: []kcv1alpha1.AppTemplate{{Ytt: &kcv1alpha1.AppTemplateYtt{}}},
				Deploy:   []kcv1alpha1.AppDeploy{{Kapp: &kcv1alpha1.AppDeployKapp{}}},
			}},
		},
	}
	return meta, pkg
}

// Install asks for one PackageInstall.
type Install struct {
	// Name of the PackageInstall.
	Name string
	// RefName of the package and Version, a semver constraint (">=1.0.0").
	RefName, Version string
}

// InstallInput describes a package set to install into one namespace.
type InstallInput struct {
	// Client must know the kapp-controller types (kube.Connect's does).
	Client client.Client
	// Namespace holds everything; it is created when missing.
	Namespace string
	// ServiceAccount is created with a Role that allows everything in
	// Namespace: kapp-controller deploys a package with the permissions of the
	// PackageInstall's service account, and the packages stay in Namespace.
	ServiceAccount string
	Packages       []InlinePackage
	Installs       []Install
	// Timeout covers kapp-controller's aggregated API not answering yet
	// (Package and PackageMetadata creation fail until it does).
	Timeout  time.Duration
	Interval time.Duration
	Progress io.Writer
	Prefix   string
}

// InstallPackages creates (or updates) the namespace, service account, RBAC,
// PackageMetadata, Package and PackageInstall objects. It does not wait for
// the PackageInstalls to reconcile: that is Check's job, with its report.
func InstallPackages(ctx context.Context, in InstallInput) error {
	switch {
	case in.Client == nil:
		return errors.New("packages.InstallPackages: Client is required")
	case in.Namespace == "" || in.ServiceAccount == "":
		return errors.New("packages.InstallPackages: Namespace and ServiceAccount are required")
	case in.Timeout <= 0:
		return errors.New("packages.InstallPackages: Timeout must be > 0 (take it from the config intervals)")
	}
	if err := requireTypes(in.Client); err != nil {
		return err
	}
	objs := installObjects(in)
	applied := 0
	return wait.For(ctx, wait.Options{
		What:     fmt.Sprintf("%d package objects applied in namespace %s", len(objs), in.Namespace),
		Timeout:  in.Timeout,
		Interval: in.Interval,
		Progress: in.Progress,
		Prefix:   in.Prefix,
	}, func(ctx context.Context) (bool, string, error) {
		// Objects applied in an earlier poll stay applied; resume after them.
		for applied < len(objs) {
			if err := ensure(ctx, in.Client, objs[applied]); err != nil {
				return false, fmt.Sprintf("applied %d/%d", applied, len(objs)), fmt.Errorf("%s %s: %w", kind(in.Client, objs[applied]), objs[applied].GetName(), err)
			}
			applied++
		}
		return true, fmt.Sprintf("applied %d/%d", applied, len(objs)), nil
	})
}

func installObjects(in InstallInput) []client.Object {
	ns, sa := in.Namespace, in.ServiceAccount
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa}},
		&rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}},
		},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: sa},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa}},
		},
	}
	for _, p := range in.Packages {
		meta, pkg := p.Objects(ns)
		objs = append(objs, meta, pkg)
	}
	for _, i := range in.Installs {
		objs = append(objs, NewPackageInstall(ns, i.Name, sa, i.RefName, i.Version))
	}
	return objs
}

// NewPackageInstall builds a PackageInstall of refName with a version constraint.
func NewPackageInstall(ns, name, serviceAccount, refName, constraint string) *pkgv1alpha1.PackageInstall {
	return &pkgv1alpha1.PackageInstall{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: pkgv1alpha1.PackageInstallSpec{
			ServiceAccountName: serviceAccount,
			PackageRef: &pkgv1alpha1.PackageRef{
				RefName:          refName,
				VersionSelection: &versions.VersionSelectionSemver{Constraints: constraint},
			},
		},
	}
}

// ensure creates obj, or updates the existing object to obj's desired state
// (objects applied in an earlier run or poll stay, and are brought in line).
func ensure(ctx context.Context, c client.Client, obj client.Object) error {
	desired := obj.DeepCopyObject()
	_, err := controllerutil.CreateOrUpdate(ctx, c, obj, func() error { return setDesired(obj, desired) })
	return err
}

// setDesired copies the desired state onto obj, which CreateOrUpdate has
// just read from the server: only what installObjects sets.
func setDesired(obj client.Object, desired runtime.Object) error {
	switch o := obj.(type) {
	case *corev1.Namespace, *corev1.ServiceAccount:
		// Nothing beyond the name.
	case *rbacv1.Role:
		o.Rules = desired.(*rbacv1.Role).Rules
	case *rbacv1.RoleBinding:
		d := desired.(*rbacv1.RoleBinding)
		o.RoleRef, o.Subjects = d.RoleRef, d.Subjects
	case *dpv1alpha1.PackageMetadata:
		o.Spec = desired.(*dpv1alpha1.PackageMetadata).Spec
	case *dpv1alpha1.Package:
		o.Spec = desired.(*dpv1alpha1.Package).Spec
	case *pkgv1alpha1.PackageInstall:
		o.Spec = desired.(*pkgv1alpha1.PackageInstall).Spec
	default:
		return fmt.Errorf("packages: no desired state known for %T", obj)
	}
	return nil
}

// kind names obj in errors.
func kind(c client.Client, obj client.Object) string {
	if gvk, err := apiutil.GVKForObject(obj, c.Scheme()); err == nil {
		return gvk.Kind
	}
	return fmt.Sprintf("%T", obj)
}
