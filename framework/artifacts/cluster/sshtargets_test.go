package cluster

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestSSHTargetsMergeNodesMachinesAndHosts(t *testing.T) {
	nodes := []unstructured.Unstructured{
		obj(t, "kind: Node\nmetadata: {name: cp-1}\nstatus: {addresses: [{type: Hostname, address: cp-1}, {type: ExternalIP, address: 10.0.0.9}, {type: InternalIP, address: 10.0.0.1}]}"),
		obj(t, "kind: Node\nmetadata: {name: md-1}\nstatus: {addresses: [{type: Hostname, address: md-1}]}"),
	}
	machines := []unstructured.Unstructured{
		// Same machine as Node md-1, which has no IP: the Machine's fills in.
		obj(t, "kind: Machine\nmetadata: {name: m-md-1, namespace: ns}\nstatus: {nodeRef: {name: md-1}, addresses: [{type: ExternalIP, address: 10.0.0.2}]}"),
		// Same as cp-1: the Node's address stays.
		obj(t, "kind: Machine\nmetadata: {name: m-cp-1, namespace: ns}\nstatus: {nodeRef: {name: cp-1}, addresses: [{type: InternalIP, address: 10.9.9.9}]}"),
		// Never joined: a target of its own, under the Machine's name.
		obj(t, "kind: Machine\nmetadata: {name: m-md-2, namespace: ns}\nstatus: {addresses: [{type: InternalIP, address: 10.0.0.3}]}"),
		// Not even an IP yet: listed, so the missing address is recorded.
		obj(t, "kind: Machine\nmetadata: {name: m-md-3, namespace: ns}\nstatus: {phase: Provisioning}"),
	}
	hosts := map[string]string{"cp-1": "jump.example:2222", "extra": "10.0.0.4"}
	got := fmt.Sprint(sshTargets(nodes, machines, hosts))
	want := "[{cp-1 jump.example:2222 SSH.Hosts} {extra 10.0.0.4 SSH.Hosts} {m-md-2 10.0.0.3 Machine ns/m-md-2 InternalIP} " +
		"{m-md-3  Machine ns/m-md-3 } {md-1 10.0.0.2 Machine ns/m-md-1 ExternalIP}]"
	if got != want {
		t.Errorf("targets\n got %s\nwant %s", got, want)
	}
}
