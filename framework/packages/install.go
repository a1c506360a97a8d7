package packages

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	versions "carvel.dev/vendir/pkg/vendir/versions/v1alpha1"
	kcv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	pkgv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	dpv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
			DisplayName:      or(p.DisplayName, p.RefName),
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
	// Client must know the kapp-controller types (NewClient / AddToScheme).
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
			if err := createOrUpdate(ctx, in.Client, objs[applied]); err != nil {
				return false, fmt.Sprintf("applied %d/%d", applied, len(objs)), fmt.Errorf("%s %s: %w", kindOf(in.Client, objs[applied]), objs[applied].GetName(), err)
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

func createOrUpdate(ctx context.Context, c client.Client, obj client.Object) error {
	// A failed Update of an earlier poll left the old resourceVersion behind,
	// which Create would reject.
	obj.SetResourceVersion("")
	err := c.Create(ctx, obj)
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	if _, isNS := obj.(*corev1.Namespace); isNS {
		return nil
	}
	existing, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("cannot copy %T", obj)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), existing); err != nil {
		return err
	}
	obj.SetResourceVersion(existing.GetResourceVersion())
	return c.Update(ctx, obj)
}

func kindOf(c client.Client, obj client.Object) string {
	if gvks, _, err := c.Scheme().ObjectKinds(obj); err == nil && len(gvks) > 0 {
		return gvks[0].Kind
	}
	return fmt.Sprintf("%T", obj)
}

// UninstallInput describes what UninstallPackages removes.
type UninstallInput struct {
	Client    client.Client
	Namespace string
	// Timeout bounds the wait for kapp-controller to delete what the
	// PackageInstalls deployed.
	Timeout  time.Duration
	Interval time.Duration
	Progress io.Writer
	Prefix   string
}

// UninstallPackages deletes every PackageInstall in the namespace, waits
// until kapp-controller has removed them, then deletes the namespace.
// Deleting the namespace first would also delete the service account
// kapp-controller needs to undeploy, and leave it stuck Terminating.
func UninstallPackages(ctx context.Context, in UninstallInput) error {
	if in.Client == nil || in.Namespace == "" || in.Timeout <= 0 {
		return errors.New("packages.UninstallPackages: Client, Namespace and Timeout are required")
	}
	if err := in.Client.DeleteAllOf(ctx, &pkgv1alpha1.PackageInstall{}, client.InNamespace(in.Namespace)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting PackageInstalls in %s: %w", in.Namespace, err)
	}
	err := wait.For(ctx, wait.Options{
		What:     "PackageInstalls in namespace " + in.Namespace + " deleted",
		Timeout:  in.Timeout,
		Interval: in.Interval,
		Progress: in.Progress,
		Prefix:   in.Prefix,
	}, func(ctx context.Context) (bool, string, error) {
		var list pkgv1alpha1.PackageInstallList
		if err := in.Client.List(ctx, &list, client.InNamespace(in.Namespace)); err != nil {
			return false, "", err
		}
		var left []string
		for _, p := range list.Items {
			left = append(left, fmt.Sprintf("%s (%s)", p.Name, Interpret(&p).Phase))
		}
		slices.Sort(left)
		return len(left) == 0, fmt.Sprintf("%d left: %v", len(left), left), nil
	})
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: in.Namespace}}
	if err := in.Client.Delete(ctx, ns); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting namespace %s: %w", in.Namespace, err)
	}
	return nil
}
