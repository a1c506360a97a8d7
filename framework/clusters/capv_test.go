package clusters

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func machineTemplate(policy string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"kind": "VSphereMachineTemplate", "metadata": map[string]any{"name": "t"},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"storagePolicyName": policy, "powerOffMode": "trySoft", "customVMXKeys": map[string]any{"keep": "me"}}}},
	}}
}

func TestCAPVCustomize(t *testing.T) {
	empty, named, other := machineTemplate(""), machineTemplate("gold"), &unstructured.Unstructured{Object: map[string]any{"kind": "Cluster"}}
	if err := CAPVCustomize(map[string]string{"RUN.container": `["pause"]`}, "hard")([]*unstructured.Unstructured{empty, named, other}); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedString(empty.Object, "spec", "template", "spec", "storagePolicyName"); found {
		t.Error("an empty storagePolicyName must be dropped (CAPV rejects \"\")")
	}
	if p, _, _ := unstructured.NestedString(named.Object, "spec", "template", "spec", "storagePolicyName"); p != "gold" {
		t.Errorf("a set storage policy must stay, got %q", p)
	}
	for _, o := range []*unstructured.Unstructured{empty, named} {
		keys, _, _ := unstructured.NestedStringMap(o.Object, "spec", "template", "spec", "customVMXKeys")
		if keys["RUN.container"] != `["pause"]` || keys["keep"] != "me" {
			t.Errorf("customVMXKeys = %v, want the template's keys plus the profile's", keys)
		}
		if m, _, _ := unstructured.NestedString(o.Object, "spec", "template", "spec", "powerOffMode"); m != "hard" {
			t.Errorf("powerOffMode = %q, want hard", m)
		}
	}
	err := CAPVCustomize(nil, "")([]*unstructured.Unstructured{other})
	if err == nil || !strings.Contains(err.Error(), "no VSphereMachineTemplate") {
		t.Errorf("a template without machine templates must be an error, got %v", err)
	}
}
