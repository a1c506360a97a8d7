package clusters

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// quick-start's development template writes etcdImageTag: ""; the
// upgrade cluster's pins replace it, and a variable the template lacks is
// added.
func TestTopologyVariablesReplaceAndAdd(t *testing.T) {
	cl := &unstructured.Unstructured{Object: map[string]any{"kind": "Cluster", "metadata": map[string]any{"name": "upg"},
		"spec": map[string]any{"topology": map[string]any{"variables": []any{
			map[string]any{"name": "etcdImageTag", "value": ""}, map[string]any{"name": "imageRepository", "value": ""}}}}}}
	other := &unstructured.Unstructured{Object: map[string]any{"kind": "ConfigMap"}}
	if err := TopologyVariables(map[string]string{"etcdImageTag": "3.5.21-0", "coreDNSImageTag": "v1.12.0"})([]*unstructured.Unstructured{other, cl}); err != nil {
		t.Fatal(err)
	}
	vars, _, _ := unstructured.NestedSlice(cl.Object, "spec", "topology", "variables")
	got := map[string]any{}
	for _, v := range vars {
		m := v.(map[string]any)
		got[m["name"].(string)] = m["value"]
	}
	if got["etcdImageTag"] != "3.5.21-0" || got["coreDNSImageTag"] != "v1.12.0" || got["imageRepository"] != "" || len(got) != 3 {
		t.Errorf("variables %v", got)
	}
	noTopology := &unstructured.Unstructured{Object: map[string]any{"kind": "Cluster", "metadata": map[string]any{"name": "plain"}}}
	if err := TopologyVariables(map[string]string{"a": "b"})([]*unstructured.Unstructured{noTopology}); err == nil || !strings.Contains(err.Error(), "ClusterClass flavor") {
		t.Errorf("a Cluster without topology: %v", err)
	}
}
