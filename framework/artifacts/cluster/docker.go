package cluster

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"sync/atomic"

	"sigs.k8s.io/cluster-api/test/infrastructure/container"

	"github.com/tkg-e2e/harness/framework/artifacts"
)

// Labels kind and CAPD put on node containers.
const (
	kindClusterLabel = "io.x-k8s.kind.cluster"
	kindRoleLabel    = "io.x-k8s.kind.role"
	roleLoadBalancer = "external-load-balancer"
)

// dockerRunner execs into node containers through Cluster API's container
// runtime (the Docker API, no docker CLI needed). Cluster API's
// DockerLogCollector is not used as is: it writes files itself, past the
// redaction and the size cap, and copies exec output without demultiplexing
// stdout from stderr.
type dockerRunner struct{ rt container.Runtime }

func (d dockerRunner) Run(ctx context.Context, node string, out io.Writer, cmd ...string) error {
	var stderr bytes.Buffer
	err := d.rt.ExecContainer(ctx, node, &container.ExecContainerInput{OutputBuffer: out, ErrorBuffer: &stderr}, cmd[0], cmd[1:]...)
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return fmt.Errorf("%s: %w (stderr: %s)", strings.Join(cmd, " "), err, lastLines(msg, 3))
		}
		return fmt.Errorf("%s: %w", strings.Join(cmd, " "), err)
	}
	return nil
}

// dockerNodes collects the node containers of a kind or CAPD cluster. It
// does not need the API server; only the pod logs kept on the nodes wait for
// apiDone, and are taken only when the API did not answer (then they are the
// only pod logs there are, as in Cluster API issue #12155).
func (c *collection) dockerNodes(ctx context.Context, apiDone <-chan struct{}) {
	rt, err := container.NewDockerClient()
	if err != nil {
		c.setDockerError(err)
		c.r.Fail("docker node containers", err)
		return
	}
	type listing struct{ nodes, lbs []container.Container }
	var found atomic.Pointer[listing]
	listErr := c.r.Run(ctx, artifacts.Item{Name: "docker list node containers", Run: func(ctx context.Context) error {
		all := container.FilterBuilder{}
		all.AddKeyNameValue("label", kindClusterLabel, c.in.Name)
		nodes, err := rt.ListContainers(ctx, all)
		if err != nil {
			return err
		}
		lb := container.FilterBuilder{}
		lb.AddKeyNameValue("label", kindClusterLabel, c.in.Name)
		lb.AddKeyNameValue("label", kindRoleLabel, roleLoadBalancer)
		lbs, err := rt.ListContainers(ctx, lb)
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
	nodes, lbs := l.nodes, l.lbs
	if len(nodes) == 0 {
		err := fmt.Errorf("no container labelled %s=%s: the cluster was never created, or was already deleted", kindClusterLabel, c.in.Name)
		c.setDockerError(err)
		c.r.Fail("docker node containers", err)
		return
	}
	isLB := map[string]bool{}
	for _, lb := range lbs {
		isLB[lb.Name] = true
	}
	run := dockerRunner{rt: rt}
	var items []artifacts.Item
	var nodeNames []string
	for _, n := range nodes {
		items = append(items, c.containerDebugItem(rt, n.Name))
		if isLB[n.Name] {
			continue
		}
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
func (c *collection) containerDebugItem(rt container.Runtime, name string) artifacts.Item {
	rel := path.Join(c.folder, "nodes", artifacts.SafeName(name), "container-inspect-and-logs.txt")
	return artifacts.Item{Name: "node " + name + " docker inspect and logs", Run: func(ctx context.Context) error {
		f, err := c.w.CreateTail(rel)
		if err != nil {
			return err
		}
		runErr := rt.ContainerDebugInfo(ctx, name, f)
		if err := c.finish(f); runErr == nil {
			runErr = err
		}
		return runErr
	}}
}

// podLogDirItem copies /var/log/pods out of a node as a tar stream and writes
// each log through the Writer (redacted, capped), never to disk unfiltered.
func (c *collection) podLogDirItem(run dockerRunner, node string) artifacts.Item {
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

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
