package clusters

import (
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// CAPVCustomize returns a CreateInput.Customize for CAPV's cluster template:
// it sets keys on every VSphereMachineTemplate (spec.template.spec.customVMXKeys),
// which CAPV copies into the clone spec of each VM (extraConfig), and drops
// an empty storagePolicyName: the default template renders
// VSPHERE_STORAGE_POLICY unconditionally, and CAPV's API rejects "" ("should
// be at least 1 chars long"), although "no policy" is what a testbed that
// uses the datastore means. A template without any VSphereMachineTemplate is
// an error: the keys would silently not apply. A non-empty powerOffMode
// replaces the template's (trySoft).
func CAPVCustomize(keys map[string]string, powerOffMode string) func(objs []*unstructured.Unstructured) error {
	return func(objs []*unstructured.Unstructured) error {
		n := 0
		for _, o := range objs {
			if o.GetKind() != "VSphereMachineTemplate" {
				continue
			}
			n++
			if p, found, _ := unstructured.NestedString(o.Object, "spec", "template", "spec", "storagePolicyName"); found && p == "" {
				unstructured.RemoveNestedField(o.Object, "spec", "template", "spec", "storagePolicyName")
			}
			if powerOffMode != "" {
				if err := unstructured.SetNestedField(o.Object, powerOffMode, "spec", "template", "spec", "powerOffMode"); err != nil {
					return fmt.Errorf("VSphereMachineTemplate %s: %w", o.GetName(), err)
				}
			}
			if len(keys) == 0 {
				continue
			}
			cur, _, err := unstructured.NestedStringMap(o.Object, "spec", "template", "spec", "customVMXKeys")
			if err != nil {
				return fmt.Errorf("VSphereMachineTemplate %s: %w", o.GetName(), err)
			}
			if cur == nil {
				cur = map[string]string{}
			}
			maps.Copy(cur, keys)
			if err := unstructured.SetNestedStringMap(o.Object, cur, "spec", "template", "spec", "customVMXKeys"); err != nil {
				return fmt.Errorf("VSphereMachineTemplate %s: %w", o.GetName(), err)
			}
		}
		if n == 0 {
			return fmt.Errorf("the CAPV cluster template has no VSphereMachineTemplate: customVMXKeys and the storage policy cannot apply")
		}
		return nil
	}
}
