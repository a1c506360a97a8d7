package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tkg-e2e/harness/framework/artifacts"
	"github.com/tkg-e2e/harness/framework/node"
)

// SSH says how to reach machines that are not containers (vSphere VMs).
type SSH struct {
	// KeyPath is the private key for User. Empty means SSH is not configured:
	// node logs are then recorded as not collected, with this reason, in
	// errors.txt and in the cluster's nodes/NOT-COLLECTED.txt.
	KeyPath string
	// User defaults to capv, the user Cluster API Provider vSphere creates.
	User string
	// Port defaults to 22.
	Port int
	// Hosts maps a node name to the address to dial. Nodes not in it are
	// dialled at their InternalIP, then ExternalIP.
	Hosts map[string]string
	// Command is the ssh client; it defaults to "ssh" from PATH.
	Command string
}

func (s SSH) configured() bool { return s.KeyPath != "" }

// sshRunner shells out to the OpenSSH client: it honours ~/.ssh/config,
// agents and jump hosts the way a person debugging the testbed would, and
// adds no dependency to the module.
type sshRunner struct {
	cfg     SSH
	addrs   map[string]string
	timeout time.Duration
}

func newSSHRunner(cfg SSH, addrs map[string]string, timeout time.Duration) (*sshRunner, error) {
	if _, err := os.Stat(cfg.KeyPath); err != nil {
		return nil, fmt.Errorf("SSH key %s: %w", cfg.KeyPath, err)
	}
	if cfg.User == "" {
		cfg.User = "capv"
	}
	if cfg.Port == 0 {
		cfg.Port = 22
	}
	if cfg.Command == "" {
		cfg.Command = "ssh"
	}
	return &sshRunner{cfg: cfg, addrs: addrs, timeout: timeout}, nil
}

func (s *sshRunner) Run(ctx context.Context, nodeName string, out io.Writer, cmd ...string) error {
	addr := s.cfg.Hosts[nodeName]
	if addr == "" {
		addr = s.addrs[nodeName]
	}
	if addr == "" {
		return fmt.Errorf("no address known for node %s (set SSH.Hosts or check the Node's status.addresses)", nodeName)
	}
	connect := max(1, int(s.timeout.Seconds()/2))
	args := []string{
		"-i", s.cfg.KeyPath,
		"-p", strconv.Itoa(s.cfg.Port),
		"-o", "BatchMode=yes",
		// Testbed VMs are created per run; their host keys cannot be known ahead.
		"-o", "StrictHostKeyChecking=no",
		"-o", "UserKnownHostsFile=/dev/null",
		"-o", "LogLevel=ERROR",
		"-o", "ConnectTimeout=" + strconv.Itoa(connect),
		s.cfg.User + "@" + addr,
		"sudo " + shellQuote(cmd),
	}
	c := exec.CommandContext(ctx, s.cfg.Command, args...)
	var stderr bytes.Buffer
	c.Stdout, c.Stderr = out, &stderr
	if err := c.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 255 {
			return fmt.Errorf("ssh %s@%s: connection failed: %s", s.cfg.User, addr, node.LastLines(stderr.String(), 3))
		}
		return fmt.Errorf("ssh %s@%s %s: %w (stderr: %s)", s.cfg.User, addr, strings.Join(cmd, " "), err, node.LastLines(stderr.String(), 3))
	}
	return nil
}

func shellQuote(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// nodeAddress prefers the InternalIP: CAPV machines are reached on the VM
// network the harness runs in.
func nodeAddress(n *unstructured.Unstructured) string {
	addrs, _, _ := unstructured.NestedSlice(n.Object, "status", "addresses")
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
	for _, t := range []string{"InternalIP", "ExternalIP", "Hostname"} {
		if found[t] != "" {
			return found[t]
		}
	}
	return ""
}

// sshItems collects node logs of machines that are not containers. Without
// an SSH key nothing can be collected; that is written down, per node, both
// in errors.txt and in the cluster's folder, so the absence is explained.
func (c *collection) sshItems(nodes []unstructured.Unstructured) []artifacts.Item {
	if len(nodes) == 0 {
		c.r.Skip("node logs over SSH", "the cluster listed no Node objects")
		return nil
	}
	names := make([]string, 0, len(nodes))
	addrs := map[string]string{}
	for _, n := range nodes {
		names = append(names, n.GetName())
		addrs[n.GetName()] = nodeAddress(&n)
	}
	if !c.in.SSH.configured() {
		reason := "SSH is not configured (no SSH key given): kubelet, containerd, journal and cloud-init logs of these nodes were not collected: " + strings.Join(names, ", ")
		c.r.Skip("node logs over SSH", reason)
		if err := c.w.WriteFile(path.Join(c.folder, "nodes", "NOT-COLLECTED.txt"), []byte(reason+"\nSet the SSH key path in the profile's artifacts settings to collect them.\n")); err != nil {
			c.r.Fail("nodes/NOT-COLLECTED.txt", err)
		}
		return nil
	}
	run, err := newSSHRunner(c.in.SSH, addrs, c.in.ItemTimeout)
	if err != nil {
		c.r.Fail("node logs over SSH", err)
		return nil
	}
	var items []artifacts.Item
	for _, n := range names {
		items = append(items, c.nodeLogItems(run, n, true)...)
	}
	return items
}
