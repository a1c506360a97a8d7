package packages

import (
	"fmt"

	pkgv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	dpv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// AddToScheme registers the kapp-controller types this package reads and
// writes (PackageInstall, PackageRepository, Package, PackageMetadata). A
// client passed to this package needs them in its scheme.
func AddToScheme(s *runtime.Scheme) error {
	for _, add := range []func(*runtime.Scheme) error{pkgv1alpha1.AddToScheme, dpv1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			return err
		}
	}
	return nil
}

// NewScheme returns the Kubernetes built-in types plus the kapp-controller types.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}

// NewClient builds a controller-runtime client that knows the kapp-controller types.
func NewClient(cfg *rest.Config) (client.Client, error) {
	s, err := NewScheme()
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: s})
}

// requireTypes fails early when a caller's client was built without
// AddToScheme; otherwise every call would fail with a less telling
// "no kind is registered" deep inside a wait.
func requireTypes(c client.Client) error {
	for _, obj := range []runtime.Object{&pkgv1alpha1.PackageInstall{}, &dpv1alpha1.Package{}, &dpv1alpha1.PackageMetadata{}} {
		if _, _, err := c.Scheme().ObjectKinds(obj); err != nil {
			return fmt.Errorf("the client's scheme lacks the kapp-controller types (build it with packages.NewClient or call packages.AddToScheme): %w", err)
		}
	}
	return nil
}
