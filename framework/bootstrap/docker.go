package bootstrap

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"sort"
	"strings"
)

// ClusterLabel is the docker label kind puts on a cluster's node containers;
// CAPD puts the same label (value: the Cluster name) on the node and load
// balancer containers of the clusters it creates.
const ClusterLabel = "io.x-k8s.kind.cluster"

// RoleLabel is kind's and CAPD's node role label (control-plane, worker,
// external-load-balancer).
const RoleLabel = "io.x-k8s.kind.role"

// SharedNetwork is the docker network kind and CAPD share across clusters; it
// is never deleted by the harness.
const SharedNetwork = "kind"

// Container is a docker container as `docker ps` shows it.
type Container struct {
	ID     string
	Name   string
	State  string
	Image  string
	Labels map[string]string
}

// docker runs the docker CLI (the same client kind and CAPD's test tooling use)
// and returns stdout; the error carries stderr.
func docker(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "docker", args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("docker %s: interrupted: %w", args[0], context.Cause(ctx))
		}
		return "", fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// Containers lists containers, running or not, matching every docker ps filter
// given ("label=io.x-k8s.kind.cluster=mgmt", "name=^h4e-").
func Containers(ctx context.Context, filters ...string) ([]Container, error) {
	args := []string{"ps", "-a", "--no-trunc", "--format", "{{json .}}"}
	for _, f := range filters {
		args = append(args, "--filter", f)
	}
	out, err := docker(ctx, args...)
	if err != nil {
		return nil, err
	}
	var cs []Container
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var raw struct{ ID, Names, State, Image, Labels string }
		if err := json.Unmarshal([]byte(line), &raw); err != nil {
			return nil, fmt.Errorf("parsing docker ps output %q: %w", line, err)
		}
		c := Container{ID: raw.ID, Name: raw.Names, State: raw.State, Image: raw.Image, Labels: map[string]string{}}
		for _, kv := range strings.Split(raw.Labels, ",") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				c.Labels[k] = v
			}
		}
		cs = append(cs, c)
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].Name < cs[j].Name })
	return cs, nil
}

// ClusterContainers lists the containers labelled as nodes or load balancer of
// the kind or CAPD cluster with this name.
func ClusterContainers(ctx context.Context, clusterName string) ([]Container, error) {
	return Containers(ctx, "label="+ClusterLabel+"="+clusterName)
}

// RemoveContainers force-removes containers (and their anonymous volumes).
func RemoveContainers(ctx context.Context, cs []Container) error {
	if len(cs) == 0 {
		return nil
	}
	args := []string{"rm", "-f", "-v"}
	for _, c := range cs {
		args = append(args, c.ID)
	}
	_, err := docker(ctx, args...)
	return err
}

// Networks lists docker network names.
func Networks(ctx context.Context) ([]string, error) {
	out, err := docker(ctx, "network", "ls", "--format", "{{.Name}}")
	if err != nil {
		return nil, err
	}
	return strings.Fields(out), nil
}

// imageID returns the local image ID of ref, or "" if the image is not present.
func imageID(ctx context.Context, ref string) (string, error) {
	out, err := docker(ctx, "image", "inspect", "-f", "{{.Id}}", ref)
	if err != nil {
		if ctx.Err() != nil {
			return "", err
		}
		if strings.Contains(strings.ToLower(err.Error()), "no such image") {
			return "", nil
		}
		return "", err
	}
	return strings.TrimSpace(out), nil
}

func names(cs []Container) []string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}
