// Package node is the harness's one way to the Docker host: the node and
// load balancer containers of kind and CAPD clusters (both label them
// io.x-k8s.kind.cluster=<cluster>), exec into nodes, their debug info, and
// loading local images into a cluster's nodes. It is built on Cluster API's
// container.Runtime (the Docker API; no docker CLI), so the harness and
// CAPD's own test tooling see the host the same way. A Runtime stored in the
// context with container.RuntimeInto is used instead of the Docker client,
// which is how tests substitute a fake.
package node

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"sync"

	"sigs.k8s.io/cluster-api/test/infrastructure/container"
)

// ClusterLabel is the docker label kind puts on a cluster's node containers;
// CAPD puts the same label (value: the Cluster name) on the node and load
// balancer containers of the clusters it creates.
const ClusterLabel = "io.x-k8s.kind.cluster"

// RoleLabel is kind's and CAPD's node role label (control-plane, worker,
// external-load-balancer).
const RoleLabel = "io.x-k8s.kind.role"

// RoleLoadBalancer is the RoleLabel value of CAPD's load balancer container,
// which is not a node: nothing is exec'd in it and no image goes into it.
const RoleLoadBalancer = "external-load-balancer"

// RoleControlPlane is the RoleLabel value of a control-plane node.
const RoleControlPlane = "control-plane"

// SharedNetwork is the docker network kind and CAPD share across clusters; it
// is never deleted by the harness and never a leak.
const SharedNetwork = "kind"

// Container is a container as the Runtime lists it (name, image, status).
type Container = container.Container

var nameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// ValidateName checks a kind or Cluster API cluster name: a DNS label short
// enough that the node, container and machine names derived from it stay
// valid hostnames.
func ValidateName(field, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%s is empty", field)
	case len(name) > 40:
		return fmt.Errorf("%s %q is longer than 40 characters (node and machine names append suffixes to it)", field, name)
	case !nameRE.MatchString(name):
		return fmt.Errorf("%s %q is not a lower-case DNS label (a-z, 0-9, '-')", field, name)
	}
	return nil
}

// dockerRuntime is created once: every call would otherwise open its own
// connection pool, and the cleanup waits list containers every few seconds.
var dockerRuntime = sync.OnceValues(container.NewDockerClient)

func runtime(ctx context.Context) (container.Runtime, error) {
	if rt, err := container.RuntimeFrom(ctx); err == nil && rt != nil {
		return rt, nil
	}
	rt, err := dockerRuntime()
	if err != nil {
		return nil, fmt.Errorf("docker: %w", err)
	}
	return rt, nil
}

func list(ctx context.Context, f container.FilterBuilder) ([]Container, error) {
	rt, err := runtime(ctx)
	if err != nil {
		return nil, err
	}
	cs, err := rt.ListContainers(ctx, f)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("listing containers: interrupted: %w", context.Cause(ctx))
		}
		return nil, fmt.Errorf("listing containers: %w", err)
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].Name < cs[j].Name })
	return cs, nil
}

// ClusterContainers lists the node and load balancer containers, running or
// not, of the kind or CAPD cluster with this name.
func ClusterContainers(ctx context.Context, clusterName string) ([]Container, error) {
	f := container.FilterBuilder{}
	f.AddKeyNameValue("label", ClusterLabel, clusterName)
	return list(ctx, f)
}

// ClusterNodes splits a cluster's containers into its nodes and its load
// balancers. Only containers kind or CAPD made count (they carry RoleLabel):
// another container that only carries the cluster label is not a node,
// whatever its name, and nothing is exec'd in it nor loaded into it.
func ClusterNodes(ctx context.Context, clusterName string) (nodes, lbs []Container, err error) {
	f := container.FilterBuilder{}
	f.AddKeyNameValue("label", ClusterLabel, clusterName)
	f.AddKeyValue("label", RoleLabel)
	all, err := list(ctx, f)
	if err != nil {
		return nil, nil, err
	}
	lbs, err = roleContainers(ctx, clusterName, RoleLoadBalancer)
	if err != nil {
		return nil, nil, err
	}
	isLB := map[string]bool{}
	for _, lb := range lbs {
		isLB[lb.Name] = true
	}
	for _, c := range all {
		if !isLB[c.Name] {
			nodes = append(nodes, c)
		}
	}
	return nodes, lbs, nil
}

// roleContainers lists a kind or CAPD cluster's containers of one
// RoleLabel value (RoleLoadBalancer, RoleControlPlane).
func roleContainers(ctx context.Context, clusterName, role string) ([]Container, error) {
	f := container.FilterBuilder{}
	f.AddKeyNameValue("label", ClusterLabel, clusterName)
	f.AddKeyNameValue("label", RoleLabel, role)
	return list(ctx, f)
}

// RemoveContainers force-removes containers with their anonymous volumes.
// It goes on after a failure and returns every error.
func RemoveContainers(ctx context.Context, cs []Container) error {
	if len(cs) == 0 {
		return nil
	}
	rt, err := runtime(ctx)
	if err != nil {
		return err
	}
	rs := make([]removal, len(cs))
	for i, c := range cs {
		rs[i] = removal{ref: c.Name, name: c.Name, what: c.Name}
	}
	_, err = removeAll(ctx, rt, rs)
	return err
}

// RemoveClusterContainers removes every container of a kind or CAPD cluster
// and returns their names.
func RemoveClusterContainers(ctx context.Context, clusterName string) ([]string, error) {
	cs, err := ClusterContainers(ctx, clusterName)
	if err != nil {
		return nil, err
	}
	return Names(cs), RemoveContainers(ctx, cs)
}

// Names are the containers' names.
func Names(cs []Container) []string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

// Exec runs cmd in a node container with stdout to out. The error carries
// the end of stderr: stdout is often a file the caller keeps, stderr is why
// it failed.
func Exec(ctx context.Context, nodeName string, out io.Writer, cmd ...string) error {
	return execIn(ctx, nodeName, &container.ExecContainerInput{OutputBuffer: out}, cmd...)
}

func execIn(ctx context.Context, nodeName string, in *container.ExecContainerInput, cmd ...string) error {
	if len(cmd) == 0 {
		return fmt.Errorf("exec in %s: no command", nodeName)
	}
	rt, err := runtime(ctx)
	if err != nil {
		return err
	}
	var stderr bytes.Buffer
	errOut := in.ErrorBuffer
	if errOut == nil {
		errOut = &stderr
	} else {
		errOut = io.MultiWriter(errOut, &stderr)
	}
	// An ErrorBuffer is always given: without one the Runtime copies docker's
	// multiplexed stream, frame headers included, into the output.
	in.ErrorBuffer = errOut
	if err := rt.ExecContainer(ctx, nodeName, in, cmd[0], cmd[1:]...); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return fmt.Errorf("%s: %w (stderr: %s)", strings.Join(cmd, " "), err, LastLines(msg, 3))
		}
		return fmt.Errorf("%s: %w", strings.Join(cmd, " "), err)
	}
	return nil
}

// DebugInfo writes `docker inspect` and `docker logs` of a container: the
// node's boot output, where a systemd or kubelet that never started shows.
func DebugInfo(ctx context.Context, name string, w io.Writer) error {
	rt, err := runtime(ctx)
	if err != nil {
		return err
	}
	return rt.ContainerDebugInfo(ctx, name, w)
}

// LastLines keeps the last n lines of s on one line, for error messages.
func LastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
