package suites

import (
	"context"
	"os"
	"strconv"
	"strings"

	"github.com/tkg-e2e/harness/framework/node"
)

// minInotifyInstances is what kind's known-issues page advises: every kind or
// CAPD node runs systemd, and with the kernel default of 128 instances a node
// created after the first few exits with "Failed to allocate manager object:
// Too many open files", which surfaces much later as a Machine stuck
// Provisioning.
const minInotifyInstances = 512

// warnHostLimits says, before any cluster is created, when the host is likely
// to fail node containers later, and how to fix it.
func warnHostLimits(env *Run) {
	b, err := os.ReadFile("/proc/sys/fs/inotify/max_user_instances")
	if err != nil {
		return
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err == nil && n < minInotifyInstances {
		env.Printf("[preflight] WARNING: fs.inotify.max_user_instances is %d; kind/CAPD nodes may fail with \"Too many open files\". "+
			"Fix: sudo sysctl -w fs.inotify.max_user_instances=%d fs.inotify.max_user_watches=524288 (make testbed does it)", n, minInotifyInstances)
	}
}

// enoughDisk is the disk check before a cluster of nodes that are
// containers on this host is made (host.diskPerNodeGiB): a full disk would
// otherwise show up minutes later as image loads retried and Machines that
// never get Ready. An engine that is not on this host is not checked, and a
// Docker error is left to the creation, which reports it with its context.
func enoughDisk(ctx context.Context, env *Env, what string, nodes int) error {
	per := env.Config.Host.DiskPerNode()
	if per == 0 {
		return nil
	}
	d, ok, err := node.DockerDisk(ctx)
	if err != nil || !ok {
		return nil //nolint:nilerr // see above
	}
	return node.NeedDisk(d, what, nodes, per, "host.diskPerNodeGiB")
}
