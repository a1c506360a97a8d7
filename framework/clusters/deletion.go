package clusters

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// NodeDeletionTimeout returns a CreateInput.Customize that sets how long
// Cluster API retries deleting a removed Machine's Node (0: until it is
// gone) on the generated control plane and MachineDeployments: on a
// ClusterClass Cluster in spec.topology, otherwise on the
// KubeadmControlPlane-like and MachineDeployment objects themselves, in the
// field of their API version (v1beta2 seconds, v1beta1 a duration).
func NodeDeletionTimeout(seconds int32) func(objs []*unstructured.Unstructured) error {
	return func(objs []*unstructured.Unstructured) error {
		set := 0
		for _, o := range objs {
			v1beta1 := strings.HasSuffix(o.GetAPIVersion(), "/v1beta1")
			var err error
			switch {
			case o.GetKind() == "Cluster" && hasField(o, "spec", "topology"):
				if err = unstructured.SetNestedField(o.Object, int64(seconds), "spec", "topology", "controlPlane", "deletion", "nodeDeletionTimeoutSeconds"); err != nil {
					break
				}
				mds, _, _ := unstructured.NestedSlice(o.Object, "spec", "topology", "workers", "machineDeployments")
				for _, md := range mds {
					if m, ok := md.(map[string]any); ok {
						d, _ := m["deletion"].(map[string]any)
						if d == nil {
							d = map[string]any{}
						}
						d["nodeDeletionTimeoutSeconds"] = int64(seconds)
						m["deletion"] = d
					}
				}
				if len(mds) > 0 {
					err = unstructured.SetNestedSlice(o.Object, mds, "spec", "topology", "workers", "machineDeployments")
				}
			case hasField(o, "spec", "machineTemplate") && v1beta1:
				err = unstructured.SetNestedField(o.Object, fmt.Sprintf("%ds", seconds), "spec", "machineTemplate", "nodeDeletionTimeout")
			case hasField(o, "spec", "machineTemplate"):
				err = unstructured.SetNestedField(o.Object, int64(seconds), "spec", "machineTemplate", "spec", "deletion", "nodeDeletionTimeoutSeconds")
			case o.GetKind() == "MachineDeployment" && v1beta1:
				err = unstructured.SetNestedField(o.Object, fmt.Sprintf("%ds", seconds), "spec", "template", "spec", "nodeDeletionTimeout")
			case o.GetKind() == "MachineDeployment":
				err = unstructured.SetNestedField(o.Object, int64(seconds), "spec", "template", "spec", "deletion", "nodeDeletionTimeoutSeconds")
			default:
				continue
			}
			if err != nil {
				return fmt.Errorf("setting nodeDeletionTimeoutSeconds on %s %s: %w", o.GetKind(), o.GetName(), err)
			}
			set++
		}
		if set == 0 {
			return fmt.Errorf("clusters.nodeDeletionTimeoutSeconds: the generated objects have no ClusterClass Cluster, control plane or MachineDeployment to set it on")
		}
		return nil
	}
}

func hasField(o *unstructured.Unstructured, fields ...string) bool {
	_, found, err := unstructured.NestedFieldNoCopy(o.Object, fields...)
	return found && err == nil
}
