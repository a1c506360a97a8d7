package packages

import (
	"fmt"

	pkgv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	dpv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// requireTypes fails early when a caller's client was built without the
// kapp-controller types; otherwise every call would fail with a less telling
// "no kind is registered" deep inside a wait.
func requireTypes(c client.Client) error {
	for _, obj := range []runtime.Object{&pkgv1alpha1.PackageInstall{}, &dpv1alpha1.Package{}, &dpv1alpha1.PackageMetadata{}} {
		if _, _, err := c.Scheme().ObjectKinds(obj); err != nil {
			return fmt.Errorf("the client's scheme lacks the kapp-controller types (connect with kube.Connect, whose kube.Scheme has them): %w", err)
		}
	}
	return nil
}
