package clusters

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tkg-e2e/harness/framework/kube"
)

// The timeout lands where Cluster API reads it: a ClusterClass Cluster's
// control plane and every MachineDeployment topology; a template without
// ClusterClass, on the control plane's and MachineDeployment's own
// objects, in their API version's field.
func TestNodeDeletionTimeoutSetsEveryMachineOwner(t *testing.T) {
	topo := parse(t, `apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata: {name: c}
spec:
  topology:
    classRef: {name: quick-start}
    controlPlane: {replicas: 1}
    workers:
      machineDeployments:
      - {class: default-worker, name: md-0, replicas: 1}
      - {class: default-worker, name: md-1, replicas: 1, deletion: {nodeDrainTimeoutSeconds: 5}}
`)
	if err := NodeDeletionTimeout(0)(topo); err != nil {
		t.Fatal(err)
	}
	c := topo[0]
	if v, found, _ := unstructured.NestedInt64(c.Object, "spec", "topology", "controlPlane", "deletion", "nodeDeletionTimeoutSeconds"); !found || v != 0 {
		t.Errorf("control plane: %v %v", v, found)
	}
	mds, _, _ := unstructured.NestedSlice(c.Object, "spec", "topology", "workers", "machineDeployments")
	for _, md := range mds {
		d := md.(map[string]any)["deletion"].(map[string]any)
		if d["nodeDeletionTimeoutSeconds"] != int64(0) {
			t.Errorf("machineDeployment %v: %v", md.(map[string]any)["name"], d)
		}
	}
	if d := mds[1].(map[string]any)["deletion"].(map[string]any); fmt.Sprint(d["nodeDrainTimeoutSeconds"]) != "5" {
		t.Errorf("md-1 lost its drain timeout: %v", d)
	}

	plain := parse(t, `apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata: {name: c}
spec: {controlPlaneRef: {kind: KubeadmControlPlane, name: c}}
---
apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: KubeadmControlPlane
metadata: {name: c}
spec: {replicas: 1, machineTemplate: {spec: {infrastructureRef: {kind: VSphereMachineTemplate, name: c}}}}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata: {name: md-0}
spec: {template: {spec: {clusterName: c}}}
---
apiVersion: controlplane.cluster.x-k8s.io/v1beta1
kind: KubeadmControlPlane
metadata: {name: old}
spec: {replicas: 1, machineTemplate: {infrastructureRef: {kind: VSphereMachineTemplate, name: old}}}
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata: {name: old-md}
spec: {template: {spec: {clusterName: old}}}
`)
	if err := NodeDeletionTimeout(30)(plain); err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		path []string
		v    any
	}{
		{nil, nil},
		{[]string{"spec", "machineTemplate", "spec", "deletion", "nodeDeletionTimeoutSeconds"}, int64(30)},
		{[]string{"spec", "template", "spec", "deletion", "nodeDeletionTimeoutSeconds"}, int64(30)},
		{[]string{"spec", "machineTemplate", "nodeDeletionTimeout"}, "30s"},
		{[]string{"spec", "template", "spec", "nodeDeletionTimeout"}, "30s"},
	} {
		if want.path == nil {
			if strings.Contains(toString(plain[i]), "nodeDeletion") {
				t.Errorf("a Cluster without topology got a timeout: %v", plain[i].Object)
			}
			continue
		}
		if v, found, _ := unstructured.NestedFieldNoCopy(plain[i].Object, want.path...); !found || v != want.v {
			t.Errorf("%s %s: %s = %v (found %v), want %v", plain[i].GetAPIVersion(), plain[i].GetKind(), strings.Join(want.path, "."), v, found, want.v)
		}
	}
}

// A template with nothing to set it on is a configuration mistake, said so.
func TestNodeDeletionTimeoutWithNothingToSetFails(t *testing.T) {
	objs := parse(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
	err := NodeDeletionTimeout(0)(objs)
	if err == nil || !strings.Contains(err.Error(), "clusters.nodeDeletionTimeoutSeconds") {
		t.Fatalf("err = %v", err)
	}
}

func parse(t *testing.T, y string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := kube.ParseManifest([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func toString(o *unstructured.Unstructured) string {
	b, _ := o.MarshalJSON()
	return string(b)
}
