package clusters

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TopologyVariables returns a CreateInput.Customize that sets ClusterClass
// variables on the generated Cluster's spec.topology.variables, replacing
// a value the template wrote (quick-start's etcdImageTag: "") or adding
// the variable.
func TopologyVariables(vars map[string]string) func(objs []*unstructured.Unstructured) error {
	return func(objs []*unstructured.Unstructured) error {
		for _, o := range objs {
			if o.GetKind() != "Cluster" {
				continue
			}
			list, found, err := unstructured.NestedSlice(o.Object, "spec", "topology", "variables")
			if err != nil || !found {
				return fmt.Errorf("cluster %s has no spec.topology.variables: topologyVariables need a ClusterClass flavor (%v)", o.GetName(), err)
			}
			names := make([]string, 0, len(vars))
			for n := range vars {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				set := false
				for _, v := range list {
					if m, ok := v.(map[string]any); ok && m["name"] == n {
						m["value"], set = vars[n], true
					}
				}
				if !set {
					list = append(list, map[string]any{"name": n, "value": vars[n]})
				}
			}
			return unstructured.SetNestedSlice(o.Object, list, "spec", "topology", "variables")
		}
		return fmt.Errorf("no Cluster among the generated objects to set topologyVariables on")
	}
}

// Chain runs Customize functions in order (nil ones skipped).
func Chain(fs ...func(objs []*unstructured.Unstructured) error) func(objs []*unstructured.Unstructured) error {
	return func(objs []*unstructured.Unstructured) error {
		for _, f := range fs {
			if f == nil {
				continue
			}
			if err := f(objs); err != nil {
				return err
			}
		}
		return nil
	}
}
