package cluster

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tkg-e2e/harness/framework/redact"
)

const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// sanitize prepares an object for the dump. Secrets are masked on the object
// itself, before any text exists, so their values never depend on the text
// rules recognising them; the Writer's text redaction runs after as a second
// line. managedFields are dropped: they double the size and never explain a
// failure.
func sanitize(obj *unstructured.Unstructured) {
	unstructured.RemoveNestedField(obj.Object, "metadata", "managedFields")
	if obj.GetKind() != "Secret" || obj.GetAPIVersion() != "v1" {
		return
	}
	for _, field := range []string{"data", "stringData"} {
		m, found, _ := unstructured.NestedMap(obj.Object, field)
		if !found {
			continue
		}
		for k := range m {
			m[k] = redact.Mask
		}
		_ = unstructured.SetNestedMap(obj.Object, m, field)
	}
	if ann := obj.GetAnnotations(); ann != nil {
		if _, ok := ann[lastApplied]; ok {
			ann[lastApplied] = redact.Mask
			obj.SetAnnotations(ann)
		}
	}
}
