package cluster

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"sync/atomic"

	"github.com/tkg-e2e/harness/framework/artifacts"
	"github.com/tkg-e2e/harness/framework/node"
)

// dockerRunner execs into node containers through framework/node (Cluster
// API's container runtime: the Docker API, no docker CLI needed). Cluster
// API's DockerLogCollector is not used as is: it writes files itself, past
// the redaction and the size cap, and copies exec output without
// demultiplexing stdout from stderr.
type dockerRunner struct{}

func (dockerRunner) Run(ctx context.Context, nodeName string, out io.Writer, cmd ...string) error {
	return node.Exec(ctx, nodeName, out, cmd...)
}

// dockerNodes collects the node containers of a kind or CAPD cluster. It
// does not need the API server; only the pod logs kept on the nodes wait for
// apiDone, and are taken only when the API did not answer (then they are the
// only pod logs there are, as in Cluster API issue #12155).
func (c *collection) dockerNodes(ctx context.Context, apiDone <-chan struct{}) {
	type listing struct{ nodes, lbs []node.Container }
	var found atomic.Pointer[listing]
	listErr := c.r.Run(ctx, artifacts.Item{Name: "docker list node containers", Run: func(ctx context.Context) error {
		nodes, lbs, err := node.ClusterNodes(ctx, c.in.Name)
		if err != nil {
			return err
		}
		found.Store(&listing{nodes: nodes, lbs: lbs})
		return nil
	}})[0]
	l := found.Load()
	if l == nil {
		if listErr == nil {
			listErr = errors.New("listing node containers returned nothing")
		}
		c.setDockerError(listErr)
		return
	}
	if len(l.nodes)+len(l.lbs) == 0 {
		err := fmt.Errorf("no container labelled %s=%s: the cluster was never created, or was already deleted", node.ClusterLabel, c.in.Name)
		c.setDockerError(err)
		c.r.Fail("docker node containers", err)
		return
	}
	run := dockerRunner{}
	var items []artifacts.Item
	var nodeNames []string
	for _, lb := range l.lbs {
		items = append(items, c.containerDebugItem(lb.Name))
	}
	for _, n := range l.nodes {
		items = append(items, c.containerDebugItem(n.Name))
		nodeNames = append(nodeNames, n.Name)
		items = append(items, c.nodeLogItems(run, n.Name, false)...)
	}
	c.r.Run(ctx, items...)

	select {
	case <-apiDone:
	case <-ctx.Done():
		return
	}
	if c.apiAnswered() {
		return
	}
	items = items[:0]
	for _, n := range nodeNames {
		items = append(items, c.podLogDirItem(run, n))
	}
	c.r.Run(ctx, items...)
}

// containerDebugItem keeps `docker inspect` and `docker logs` of a node
// container: the node's boot output, where a systemd or kubelet that never
// started shows.
func (c *collection) containerDebugItem(name string) artifacts.Item {
	rel := path.Join(c.folder, "nodes", artifacts.SafeName(name), "container-inspect-and-logs.txt")
	return artifacts.Item{Name: "node " + name + " docker inspect and logs", Run: func(ctx context.Context) error {
		f, err := c.w.CreateTail(rel)
		if err != nil {
			return err
		}
		runErr := node.DebugInfo(ctx, name, f)
		if err := c.finish(f); runErr == nil {
			runErr = err
		}
		return runErr
	}}
}

// podLogDirItem copies /var/log/pods out of a node as a tar stream and writes
// each log through the Writer (redacted, capped), never to disk unfiltered.
func (c *collection) podLogDirItem(run NodeRunner, node string) artifacts.Item {
	base := path.Join(c.folder, "nodes", artifacts.SafeName(node), "var-log-pods")
	return artifacts.Item{Name: "node " + node + " /var/log/pods", Run: func(ctx context.Context) error {
		pr, pw := io.Pipe()
		execDone := make(chan error, 1)
		go func() {
			err := run.Run(ctx, node, pw, "tar", "--dereference", "--directory", "/var/log/pods", "--create", "--file", "-", ".")
			pw.CloseWithError(err)
			execDone <- err
		}()
		tr := tar.NewReader(pr)
		var errs []error
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				errs = append(errs, err)
				break
			}
			// Rotated logs are gzip files; the current .log holds the end.
			if h.Typeflag != tar.TypeReg || !strings.HasSuffix(h.Name, ".log") {
				continue
			}
			rel := path.Join(base, path.Clean("/" + h.Name)[1:])
			f, err := c.w.CreateTail(rel)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			_, cerr := io.Copy(f, tr)
			errs = append(errs, cerr, c.finish(f))
		}
		// Drain, so the exec's writer is never blocked on a reader that left.
		_, _ = io.Copy(io.Discard, pr)
		errs = append(errs, <-execDone)
		return errors.Join(errs...)
	}}
}
