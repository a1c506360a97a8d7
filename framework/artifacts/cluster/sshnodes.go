package cluster

import (
	"context"
	"fmt"
	"path"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tkg-e2e/harness/framework/artifacts"
)

// sshNodes collects the node logs of machines that are not containers
// (vSphere VMs) over SSH: the same files as the Docker path (nodeLogs),
// through the same items, with the connection as one more item per node.
// nodes are the cluster's Node objects (nil when its API did not answer);
// Machines listed from Input.MachineKubeconfigs add the VMs whose Node is
// missing. Without an SSH key nothing can be collected, and that is written
// down instead of leaving the nodes folder silently empty.
func (c *collection) sshNodes(ctx context.Context, nodes []unstructured.Unstructured, apiUp bool) {
	if !c.in.SSH.configured() {
		c.r.Skip("node logs over SSH", NotConfigured)
		note := NotConfigured + "\n"
		if len(nodes) > 0 {
			var names []string
			for _, n := range nodes {
				names = append(names, n.GetName())
			}
			note += "nodes: " + strings.Join(names, ", ") + "\n"
		}
		if err := c.w.WriteFile(path.Join(c.folder, "nodes", "NOT-COLLECTED.txt"), []byte(note)); err != nil {
			c.r.Fail("nodes/NOT-COLLECTED.txt", err)
		}
		return
	}
	exec, err := newSSHExec(c.in.SSH)
	if err != nil {
		c.r.Fail("node logs over SSH", err)
		return
	}
	defer exec.Close()

	var machines atomic.Pointer[[]unstructured.Unstructured]
	if len(c.in.MachineKubeconfigs) > 0 {
		c.r.Run(ctx, c.machinesItem(&machines))
	}
	var ms []unstructured.Unstructured
	if p := machines.Load(); p != nil {
		ms = *p
	}
	targets := sshTargets(nodes, ms, c.in.SSH.Hosts)
	if len(targets) == 0 {
		reason := "no Node, no Machine and no SSH.Hosts entry: nothing to connect to"
		if !apiUp {
			reason = "the cluster's API did not answer and no Machine of it was found (Input.MachineKubeconfigs) to take node addresses from"
		}
		c.r.Skip("node logs over SSH", reason)
		return
	}

	var mu sync.Mutex
	connected := map[string]bool{}
	var items []artifacts.Item
	for _, t := range targets {
		items = append(items, c.sshConnectItem(exec, t, func() { mu.Lock(); connected[t.name] = true; mu.Unlock() }))
	}
	c.r.Run(ctx, items...)

	items = items[:0]
	for _, t := range targets {
		mu.Lock()
		ok := connected[t.name]
		mu.Unlock()
		if !ok {
			c.r.Skip("node "+t.name+" logs", "the SSH connection failed (see its ssh connect item)")
			continue
		}
		items = append(items, c.nodeLogItems(exec, t.name, true)...)
		if !apiUp {
			// As on the Docker path: with the API down, the pod logs kept on
			// the node are the only pod logs there are.
			items = append(items, c.podLogDirItem(exec, t.name))
		}
	}
	c.r.Run(ctx, items...)
}

// sshConnectItem connects to one node and records the host key it
// presented in nodes/<node>/ssh-host-key.txt, also when authentication then
// fails, since the key was seen by then.
func (c *collection) sshConnectItem(exec *sshExec, t sshTarget, ok func()) artifacts.Item {
	return artifacts.Item{Name: "node " + t.name + " ssh connect", Run: func(ctx context.Context) error {
		if t.addr == "" {
			return fmt.Errorf("no address to dial: the Node has no InternalIP or ExternalIP and no Machine of it has one (%s)", t.from)
		}
		hk, err := exec.Connect(ctx, t.name, t.addr)
		if hk.Fingerprint != "" {
			rec := fmt.Sprintf("address: %s (from %s)\nhost key: %s %s\n"+
				"accepted without verification: the VM is the run's own, cloned minutes ago, so no known_hosts can hold it;\n"+
				"compare with `ssh-keygen -lf /etc/ssh/ssh_host_%s_key.pub` on the VM console if in doubt.\n",
				hk.Addr, strings.TrimSpace(t.from), hk.Type, hk.Fingerprint, strings.TrimPrefix(hk.Type, "ssh-"))
			if werr := c.w.WriteFile(path.Join(c.folder, "nodes", artifacts.SafeName(t.name), "ssh-host-key.txt"), []byte(rec)); werr != nil && err == nil {
				err = werr
			}
		}
		if err != nil {
			return err
		}
		ok()
		return nil
	}}
}
