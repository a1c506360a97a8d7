package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	kindv1 "sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	kind "sigs.k8s.io/kind/pkg/cluster"

	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/framework/wait"
)

// Resource kinds and roles this package records in the run state.
const (
	ResourceKindCluster = "kind-cluster"
	RoleBootstrap       = "bootstrap"
)

// DefaultDockerSocket is where CAPD expects the docker socket inside the bootstrap cluster.
const DefaultDockerSocket = "/var/run/docker.sock"

var nameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// ValidateName checks a kind or Cluster API cluster name: a DNS label short
// enough that the node and machine names derived from it stay valid hostnames.
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

// KindCluster is a kind cluster the harness created or attached to.
type KindCluster struct {
	Name string
	// KubeconfigPath holds its kubeconfig (host address, for use from this machine).
	KubeconfigPath string
	Kube           *kube.Cluster
}

// CreateKindClusterInput is the input of CreateKindCluster.
type CreateKindClusterInput struct {
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
	// NodesReadyTimeout bounds the wait for the node to be Ready afterwards.
	NodesReadyTimeout time.Duration
	Interval          time.Duration
	Progress          io.Writer
	Prefix            string
}

func (in *CreateKindClusterInput) validate() error {
	var errs []string
	if err := ValidateName("Name", in.Name); err != nil {
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
	if in.Timeout <= 0 || in.NodesReadyTimeout <= 0 {
		errs = append(errs, "Timeout and NodesReadyTimeout must be > 0 (set them from the config intervals)")
	}
	if in.MountDockerSocket {
		if in.DockerSocket == "" {
			in.DockerSocket = DefaultDockerSocket
		}
		if _, err := os.Stat(in.DockerSocket); err != nil {
			errs = append(errs, fmt.Sprintf("DockerSocket: %v (CAPD needs the docker socket; is docker running?)", err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("bootstrap.CreateKindCluster: invalid input: %s", strings.Join(errs, "; "))
	}
	return nil
}

// KindDeleteHint is the command that deletes a kind cluster by hand.
func KindDeleteHint(name string) string { return "kind delete cluster --name " + name }

// CreateKindCluster creates a one-node kind cluster from a node image given by
// tag, with the docker socket mounted for CAPD, writes its kubeconfig and
// waits for the node to be Ready. It records the cluster in the run state
// before creating it. An existing cluster of the same name is an error (use
// Attach to resume it).
func CreateKindCluster(ctx context.Context, in CreateKindClusterInput) (*KindCluster, error) {
	if err := in.validate(); err != nil {
		return nil, err
	}
	p := wait.Printer{W: in.Progress, Prefix: in.Prefix}
	provider := kind.NewProvider(kind.ProviderWithDocker(), kind.ProviderWithLogger(kindLogger{p: p}))
	existing, err := provider.List()
	if err != nil {
		return nil, fmt.Errorf("listing kind clusters: %w", err)
	}
	if slices.Contains(existing, in.Name) {
		return nil, fmt.Errorf("kind cluster %q already exists: attach to it (bootstrap.Attach) to resume, or delete it with %q",
			in.Name, KindDeleteHint(in.Name))
	}

	key := run.Resource{Kind: ResourceKindCluster, Name: in.Name}.Key()
	if err := in.State.PutResource(run.Resource{
		Kind: ResourceKindCluster, Name: in.Name, Role: RoleBootstrap, Kubeconfig: in.KubeconfigPath,
		CreatedBy: in.CreatedBy, State: "creating", DeleteHint: KindDeleteHint(in.Name),
		Attributes: map[string]string{"nodeImage": in.NodeImage, "containerLabel": ClusterLabel + "=" + in.Name},
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
	opts := []kind.CreateOption{
		kind.CreateWithV1Alpha4Config(cfg),
		kind.CreateWithNodeImage(in.NodeImage),
		kind.CreateWithKubeconfigPath(in.KubeconfigPath),
		kind.CreateWithDisplayUsage(false),
		kind.CreateWithDisplaySalutation(false),
	}

	start := time.Now()
	p.Printf("creating kind cluster %s from %s", in.Name, in.NodeImage)
	cctx, cancel := context.WithTimeout(ctx, in.Timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- provider.Create(in.Name, opts...) }()
	select {
	case err := <-done:
		if err != nil {
			return nil, fmt.Errorf("creating kind cluster %s: %w", in.Name, err)
		}
	case <-cctx.Done():
		// kind's Create takes no context: remove its containers so it fails
		// fast, and give it a moment to notice, so nothing is left half-made.
		abortKindCreate(in.Name, done, p)
		if ctx.Err() != nil {
			return nil, fmt.Errorf("creating kind cluster %s: interrupted: %w", in.Name, context.Cause(ctx))
		}
		return nil, fmt.Errorf("creating kind cluster %s: timed out after %s", in.Name, in.Timeout)
	}
	p.Printf("kind cluster %s created in %s", in.Name, time.Since(start).Round(100*time.Millisecond))

	kc, err := kube.Connect(in.KubeconfigPath)
	if err != nil {
		return nil, err
	}
	if err := kube.WaitNodesReady(ctx, kube.NodesInput{Cluster: kc, Count: 1, What: "node of kind cluster " + in.Name + " Ready",
		Timeout: in.NodesReadyTimeout, Interval: in.Interval, Progress: in.Progress, Prefix: in.Prefix}); err != nil {
		return nil, err
	}
	if err := in.State.SetResourceState(key, "ready"); err != nil {
		return nil, err
	}
	return &KindCluster{Name: in.Name, KubeconfigPath: in.KubeconfigPath, Kube: kc}, nil
}

func abortKindCreate(name string, done <-chan error, p wait.Printer) {
	p.Printf("aborting kind create %s: removing its containers", name)
	sweep := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if cs, err := ClusterContainers(ctx, name); err == nil {
			_ = RemoveContainers(ctx, cs)
		}
	}
	sweep()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
	}
	// A container created while the first sweep ran would survive it.
	sweep()
}

// AttachInput is the input of Attach.
type AttachInput struct {
	Name string
	// KubeconfigPath is (re)written with the cluster's kubeconfig.
	KubeconfigPath string
	// State, if set, gets the cluster recorded (as ready) when it is not yet.
	State    *run.State
	Progress io.Writer
	Prefix   string
}

// Attach re-attaches to an existing kind cluster by name (RESUME=1): it writes
// its kubeconfig and runs Health.
func Attach(ctx context.Context, in AttachInput) (*KindCluster, *HealthReport, error) {
	if err := ValidateName("Name", in.Name); err != nil {
		return nil, nil, fmt.Errorf("bootstrap.Attach: invalid input: %w", err)
	}
	if in.KubeconfigPath == "" {
		return nil, nil, errors.New("bootstrap.Attach: invalid input: KubeconfigPath is empty")
	}
	provider := kind.NewProvider(kind.ProviderWithDocker())
	existing, err := provider.List()
	if err != nil {
		return nil, nil, fmt.Errorf("listing kind clusters: %w", err)
	}
	if !slices.Contains(existing, in.Name) {
		return nil, nil, fmt.Errorf("kind cluster %q does not exist (existing: %s)", in.Name, strings.Join(existing, ", "))
	}
	cfg, err := provider.KubeConfig(in.Name, false)
	if err != nil {
		return nil, nil, fmt.Errorf("kubeconfig of kind cluster %s: %w", in.Name, err)
	}
	if err := writeFile(in.KubeconfigPath, []byte(cfg)); err != nil {
		return nil, nil, err
	}
	if in.State != nil {
		if _, ok := in.State.Resource(ResourceKindCluster, in.Name); !ok {
			if err := in.State.PutResource(run.Resource{Kind: ResourceKindCluster, Name: in.Name, Role: RoleBootstrap,
				Kubeconfig: in.KubeconfigPath, State: "ready", DeleteHint: KindDeleteHint(in.Name),
				Attributes: map[string]string{"containerLabel": ClusterLabel + "=" + in.Name, "attached": "true"}}); err != nil {
				return nil, nil, err
			}
		}
	}
	kc, err := kube.Connect(in.KubeconfigPath)
	if err != nil {
		return nil, nil, err
	}
	rep, err := Health(ctx, HealthInput{Name: in.Name, Kube: kc})
	if err != nil {
		return nil, rep, err
	}
	wait.Printer{W: in.Progress, Prefix: in.Prefix}.Printf("attached to kind cluster %s: %s", in.Name, rep)
	return &KindCluster{Name: in.Name, KubeconfigPath: in.KubeconfigPath, Kube: kc}, rep, nil
}

// DeleteKindClusterInput is the input of DeleteKindCluster.
type DeleteKindClusterInput struct {
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

// DeleteKindCluster deletes a kind cluster (a missing one is not an error) and
// checks that none of its containers is left.
func DeleteKindCluster(ctx context.Context, in DeleteKindClusterInput) error {
	if err := ValidateName("Name", in.Name); err != nil {
		return fmt.Errorf("bootstrap.DeleteKindCluster: invalid input: %w", err)
	}
	if in.Timeout <= 0 {
		return errors.New("bootstrap.DeleteKindCluster: invalid input: Timeout must be > 0")
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
	provider := kind.NewProvider(kind.ProviderWithDocker(), kind.ProviderWithLogger(kindLogger{p: p}))
	done := make(chan error, 1)
	go func() { done <- provider.Delete(in.Name, kcPath) }()
	dctx, cancel := context.WithTimeout(ctx, in.Timeout)
	defer cancel()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("deleting kind cluster %s: %w (by hand: %s)", in.Name, err, KindDeleteHint(in.Name))
		}
	case <-dctx.Done():
		return fmt.Errorf("deleting kind cluster %s: %w (by hand: %s)", in.Name, context.Cause(dctx), KindDeleteHint(in.Name))
	}
	left, err := ClusterContainers(ctx, in.Name)
	if err != nil {
		return err
	}
	if len(left) > 0 {
		if err := RemoveContainers(ctx, left); err != nil {
			return fmt.Errorf("kind cluster %s: containers left after delete (%s): %w", in.Name, strings.Join(names(left), ", "), err)
		}
	}
	p.Printf("kind cluster %s deleted in %s", in.Name, time.Since(start).Round(100*time.Millisecond))
	if in.State != nil {
		if _, ok := in.State.Resource(ResourceKindCluster, in.Name); ok {
			return in.State.SetResourceState(run.Resource{Kind: ResourceKindCluster, Name: in.Name}.Key(), "deleted")
		}
	}
	return nil
}

func writeFile(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}
