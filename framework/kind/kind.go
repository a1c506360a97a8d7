// Package kind creates and deletes kind clusters (the run's bootstrap
// cluster, the first Cluster API management cluster, discarded after
// `clusterctl move`) with kind as a library, and provides what cleanup needs
// for them: a Deleter and a LeakCheck. Their containers are reached through
// framework/node; providers and images are other packages' business, so a
// kind cluster can be made and removed without them.
package kind

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	kindv1 "sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	kindcluster "sigs.k8s.io/kind/pkg/cluster"

	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/node"
	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/framework/wait"
)

// Resource kind and role this package records in the run state.
const (
	ResourceKind  = "kind-cluster"
	RoleBootstrap = "bootstrap"
)

// DefaultDockerSocket is where CAPD expects the docker socket inside the bootstrap cluster.
const DefaultDockerSocket = "/var/run/docker.sock"

// Cluster is a kind cluster the harness created.
type Cluster struct {
	Name string
	// KubeconfigPath holds its kubeconfig (host address, for use from this machine).
	KubeconfigPath string
	Kube           *kube.Cluster
}

// CreateInput is the input of Create.
type CreateInput struct {
	Name string
	// NodeImage by tag, e.g. kindest/node:v1.33.1. Digests are rejected: kind's
	// and Cluster API's defaults are digests, which a locally built image has not.
	NodeImage string
	// KubeconfigPath is written with the cluster's kubeconfig (the file is replaced).
	KubeconfigPath string
	// MountDockerSocket mounts DockerSocket into the node, which CAPD needs to create clusters.
	MountDockerSocket bool
	// DockerSocket on the host; defaults to /var/run/docker.sock.
	DockerSocket string
	// State records the cluster before it is created (required).
	State *run.State
	// CreatedBy is the stage name recorded with the resource.
	CreatedBy string
	// Timeout bounds `kind create cluster`.
	Timeout time.Duration
	// NodesReady bounds and paces the wait for the node to be Ready afterwards.
	NodesReady wait.Interval
	Progress   io.Writer
	Prefix     string
}

func (in *CreateInput) validate() error {
	var errs []string
	if err := node.ValidateName("Name", in.Name); err != nil {
		errs = append(errs, err.Error())
	}
	switch {
	case in.NodeImage == "":
		errs = append(errs, "NodeImage is empty (pass kindest/node:<version> by tag, e.g. $KIND_NODE_IMAGE)")
	case strings.Contains(in.NodeImage, "@"):
		errs = append(errs, fmt.Sprintf("NodeImage %q is a digest reference; pass it by tag (kindest/node:v1.33.1): a locally built image has no RepoDigest", in.NodeImage))
	}
	if in.KubeconfigPath == "" {
		errs = append(errs, "KubeconfigPath is empty (where to write the kind cluster's kubeconfig)")
	}
	if in.State == nil {
		errs = append(errs, "State is nil (resources are recorded in the run state before they are created; use run.New)")
	}
	errs = append(errs, wait.Timeouts{"Timeout": in.Timeout, "NodesReady": in.NodesReady.Timeout}.Missing("")...)
	if in.MountDockerSocket {
		if in.DockerSocket == "" {
			in.DockerSocket = DefaultDockerSocket
		}
		if _, err := os.Stat(in.DockerSocket); err != nil {
			errs = append(errs, fmt.Sprintf("DockerSocket: %v (CAPD needs the docker socket; is docker running?)", err))
		}
	}
	return wait.Invalid("kind.Create", errs)
}

// DeleteHint is the command that deletes a kind cluster by hand.
func DeleteHint(name string) string { return "kind delete cluster --name " + name }

func provider(p wait.Printer) *kindcluster.Provider {
	return kindcluster.NewProvider(kindcluster.ProviderWithDocker(), kindcluster.ProviderWithLogger(kindLogger{p: p}))
}

// Create creates a one-node kind cluster from a node image given by tag,
// optionally with the docker socket mounted for CAPD, writes its kubeconfig
// and waits for the node to be Ready. It records the cluster in the run state
// before creating it. An existing cluster of the same name is an error.
func Create(ctx context.Context, in CreateInput) (*Cluster, error) {
	if err := in.validate(); err != nil {
		return nil, err
	}
	p := wait.Printer{W: in.Progress, Prefix: in.Prefix}
	kp := provider(p)
	existing, err := kp.List()
	if err != nil {
		return nil, fmt.Errorf("listing kind clusters: %w", err)
	}
	if slices.Contains(existing, in.Name) {
		return nil, fmt.Errorf("kind cluster %q already exists: resume the run (RESUME=1) to use it, or delete it with %q",
			in.Name, DeleteHint(in.Name))
	}

	key := run.Resource{Kind: ResourceKind, Name: in.Name}.Key()
	if err := in.State.PutResource(run.Resource{
		Kind: ResourceKind, Name: in.Name, Role: RoleBootstrap, Kubeconfig: in.KubeconfigPath,
		CreatedBy: in.CreatedBy, State: "creating", DeleteHint: DeleteHint(in.Name),
		Attributes: map[string]string{"nodeImage": in.NodeImage, "containerLabel": node.ClusterLabel + "=" + in.Name},
	}); err != nil {
		return nil, fmt.Errorf("recording kind cluster %s in the run state: %w", in.Name, err)
	}

	if err := os.MkdirAll(filepath.Dir(in.KubeconfigPath), 0o755); err != nil {
		return nil, err
	}
	// kind merges into an existing kubeconfig file; this path is ours, so start clean.
	_ = os.Remove(in.KubeconfigPath)

	cfg := &kindv1.Cluster{Nodes: []kindv1.Node{{Role: kindv1.ControlPlaneRole}}}
	if in.MountDockerSocket {
		cfg.Nodes[0].ExtraMounts = append(cfg.Nodes[0].ExtraMounts, kindv1.Mount{HostPath: in.DockerSocket, ContainerPath: DefaultDockerSocket})
	}
	kindv1.SetDefaultsCluster(cfg)
	opts := []kindcluster.CreateOption{
		kindcluster.CreateWithV1Alpha4Config(cfg),
		kindcluster.CreateWithNodeImage(in.NodeImage),
		kindcluster.CreateWithKubeconfigPath(in.KubeconfigPath),
		kindcluster.CreateWithDisplayUsage(false),
		kindcluster.CreateWithDisplaySalutation(false),
	}

	start := time.Now()
	p.Printf("creating kind cluster %s from %s", in.Name, in.NodeImage)
	cctx, cancel := context.WithTimeout(ctx, in.Timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- kp.Create(in.Name, opts...) }()
	select {
	case err := <-done:
		if err != nil {
			return nil, fmt.Errorf("creating kind cluster %s: %w", in.Name, err)
		}
	case <-cctx.Done():
		// kind's Create takes no context: remove its containers so it fails
		// fast, and give it a moment to notice, so nothing is left half-made.
		abortCreate(in.Name, done, p)
		if ctx.Err() != nil {
			return nil, fmt.Errorf("creating kind cluster %s: interrupted: %w", in.Name, context.Cause(ctx))
		}
		return nil, fmt.Errorf("creating kind cluster %s: timed out after %s", in.Name, in.Timeout)
	}
	p.Printf("kind cluster %s created in %s", in.Name, time.Since(start).Round(100*time.Millisecond))
	if ids, err := RecordContainers(ctx, in.State, in.Name); err != nil {
		p.Printf("warning: cannot record the containers of kind cluster %s (cleanup falls back to name, label and creation time): %v", in.Name, err)
	} else {
		p.Printf("recorded the containers of kind cluster %s: %s", in.Name, strings.Join(ids, ", "))
	}

	kc, err := kube.Connect(in.KubeconfigPath)
	if err != nil {
		return nil, err
	}
	if err := kube.WaitNodesReady(ctx, kube.NodesInput{Cluster: kc, Count: 1, What: "node of kind cluster " + in.Name + " Ready",
		Timeout: in.NodesReady.Timeout, Interval: in.NodesReady.Poll, Progress: in.Progress, Prefix: in.Prefix}); err != nil {
		return nil, err
	}
	if err := in.State.SetResourceState(key, "ready"); err != nil {
		return nil, err
	}
	return &Cluster{Name: in.Name, KubeconfigPath: in.KubeconfigPath, Kube: kc}, nil
}

func abortCreate(name string, done <-chan error, p wait.Printer) {
	p.Printf("aborting kind create %s: removing its containers", name)
	sweep := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = node.RemoveClusterContainers(ctx, name)
	}
	sweep()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
	}
	// A container created while the first sweep ran would survive it.
	sweep()
}

// DeleteInput is the input of Delete.
type DeleteInput struct {
	Name string
	// KubeconfigPath is the file kind removes the cluster's entry from; empty uses a scratch file,
	// never the user's ~/.kube/config.
	KubeconfigPath string
	// State, if set, gets the resource marked deleted.
	State    *run.State
	Timeout  time.Duration
	Progress io.Writer
	Prefix   string
}

// Delete deletes a kind cluster (a missing one is not an error) and removes
// any of its containers kind left. A cluster the State records is deleted by
// removing the run's containers by ID (deleteOwned): kind's own delete
// removes every container labelled with the name, whoever made it.
func Delete(ctx context.Context, in DeleteInput) error {
	if err := node.ValidateName("Name", in.Name); err != nil {
		return fmt.Errorf("kind.Delete: invalid input: %w", err)
	}
	if in.Timeout <= 0 {
		return wait.Invalid("kind.Delete", []string{"Timeout must be > 0"})
	}
	if in.State != nil {
		if r, ok := in.State.Resource(ResourceKind, in.Name); ok {
			return deleteOwned(ctx, in, r) // the run's containers only, never by label
		}
	}
	p := wait.Printer{W: in.Progress, Prefix: in.Prefix}
	kcPath := in.KubeconfigPath
	if kcPath == "" {
		f, err := os.CreateTemp("", "harness-kind-delete-")
		if err != nil {
			return err
		}
		f.Close()
		defer os.Remove(f.Name())
		kcPath = f.Name()
	}
	start := time.Now()
	kp := provider(p)
	done := make(chan error, 1)
	go func() { done <- kp.Delete(in.Name, kcPath) }()
	dctx, cancel := context.WithTimeout(ctx, in.Timeout)
	defer cancel()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("deleting kind cluster %s: %w (by hand: %s)", in.Name, err, DeleteHint(in.Name))
		}
	case <-dctx.Done():
		return fmt.Errorf("deleting kind cluster %s: %w (by hand: %s)", in.Name, context.Cause(dctx), DeleteHint(in.Name))
	}
	if left, err := node.RemoveClusterContainers(ctx, in.Name); err != nil {
		return fmt.Errorf("kind cluster %s: containers left after delete (%s): %w", in.Name, strings.Join(left, ", "), err)
	}
	p.Printf("kind cluster %s deleted in %s", in.Name, time.Since(start).Round(100*time.Millisecond))
	if in.State != nil {
		if _, ok := in.State.Resource(ResourceKind, in.Name); ok {
			return in.State.SetResourceState(run.Resource{Kind: ResourceKind, Name: in.Name}.Key(), "deleted")
		}
	}
	return nil
}
