package cluster

import (
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// sshTarget is one machine to reach over SSH: a Node, or a Machine whose
// Node never appeared (a node that never joined is when its logs matter).
type sshTarget struct {
	name string
	addr string
	// from says where the address came from, for the host key record.
	from string
}

// addressOf picks the address to dial from a status.addresses list (Node
// and Machine share the shape), preferring the InternalIP: CAPV machines
// are reached on the VM network the harness runs in.
func addressOf(obj *unstructured.Unstructured) (addr, typ string) {
	addrs, _, _ := unstructured.NestedSlice(obj.Object, "status", "addresses")
	found := map[string]string{}
	for _, raw := range addrs {
		if a, ok := raw.(map[string]any); ok {
			t, _ := a["type"].(string)
			v, _ := a["address"].(string)
			if found[t] == "" {
				found[t] = v
			}
		}
	}
	for _, t := range []string{"InternalIP", "ExternalIP"} {
		if found[t] != "" {
			return found[t], t
		}
	}
	return "", ""
}

// sshTargets merges the cluster's Nodes, its Machines (from whichever
// cluster holds them) and the explicit hosts into one list, sorted by name.
// A Machine with a nodeRef names the same machine as that Node; one
// without is a target of its own, under the Machine's name.
func sshTargets(nodes, machines []unstructured.Unstructured, hosts map[string]string) []sshTarget {
	byName := map[string]*sshTarget{}
	add := func(t sshTarget) {
		if have := byName[t.name]; have != nil {
			if have.addr == "" {
				have.addr, have.from = t.addr, t.from
			}
			return
		}
		byName[t.name] = &t
	}
	for i := range nodes {
		addr, typ := addressOf(&nodes[i])
		add(sshTarget{name: nodes[i].GetName(), addr: addr, from: "Node " + typ})
	}
	for i := range machines {
		m := &machines[i]
		name, _, _ := unstructured.NestedString(m.Object, "status", "nodeRef", "name")
		if name == "" {
			name = m.GetName()
		}
		addr, typ := addressOf(m)
		add(sshTarget{name: name, addr: addr, from: "Machine " + m.GetNamespace() + "/" + m.GetName() + " " + typ})
	}
	for name, addr := range hosts {
		if t := byName[name]; t != nil {
			t.addr, t.from = addr, "SSH.Hosts"
			continue
		}
		add(sshTarget{name: name, addr: addr, from: "SSH.Hosts"})
	}
	out := make([]sshTarget, 0, len(byName))
	for _, t := range byName {
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}
