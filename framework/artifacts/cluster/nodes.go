package cluster

import (
	"context"
	"io"
	"path"

	"github.com/tkg-e2e/harness/framework/artifacts"
)

// NodeRunner runs a command on a node, streaming its stdout to out. The node
// side is reached without the cluster's API (docker exec into a kind or CAPD
// node container, SSH into a vSphere machine), which is what makes node logs
// available when the API server never came up.
type NodeRunner interface {
	Run(ctx context.Context, node string, out io.Writer, cmd ...string) error
}

// nodeLog is one file collected from every node.
type nodeLog struct {
	file string
	cmd  []string
	// sshOnly marks files that exist only on machines bootstrapped by
	// cloud-init (vSphere); CAPD bootstraps over docker exec instead.
	sshOnly bool
}

// nodeLogs mirror what Cluster API's docker log collector takes, plus
// cloud-init's output, where a vSphere machine that never joined says why.
var nodeLogs = []nodeLog{
	{file: "kubelet.log", cmd: []string{"journalctl", "--no-pager", "--output=short-precise", "-u", "kubelet.service"}},
	{file: "containerd.log", cmd: []string{"journalctl", "--no-pager", "--output=short-precise", "-u", "containerd.service"}},
	{file: "journal.log", cmd: []string{"journalctl", "--no-pager", "--output=short-precise"}},
	{file: "crictl-ps.txt", cmd: []string{"crictl", "ps", "-a"}},
	{file: "kubelet-version.txt", cmd: []string{"kubelet", "--version"}},
	{file: "cloud-init-output.log", cmd: []string{"cat", "/var/log/cloud-init-output.log"}, sshOnly: true},
}

// nodeLogItems returns one item per node log file. Each streams into a
// tail-keeping file: the end of a journal is where a failure shows.
func (c *collection) nodeLogItems(run NodeRunner, node string, ssh bool) []artifacts.Item {
	var items []artifacts.Item
	for _, l := range nodeLogs {
		if l.sshOnly && !ssh {
			continue
		}
		rel := path.Join(c.folder, "nodes", artifacts.SafeName(node), l.file)
		items = append(items, artifacts.Item{
			Name: "node " + node + " " + l.file,
			Run: func(ctx context.Context) error {
				f, err := c.w.CreateTail(rel)
				if err != nil {
					return err
				}
				runErr := run.Run(ctx, node, f, l.cmd...)
				if err := c.finish(f); runErr == nil {
					runErr = err
				}
				return runErr
			},
		})
	}
	return items
}
