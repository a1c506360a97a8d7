// Package suites holds one reusable Ginkgo spec per stage, in Cluster API's
// style: XxxSpec(ctx, inputGetter) declares the spec; the input is read
// through the getter when the spec runs, and validated with a clear message.
// The e2e/ entry points decide which stages run and with which Env.
package suites

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"

	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/redact"
	"github.com/tkg-e2e/harness/framework/run"
)

// Env is what every stage spec shares: the loaded config, the run state, the
// artifacts folder, the redacted output, and the clusters built so far.
type Env struct {
	Config *config.Config
	State  *run.State
	// ArtifactFolder is the run's folder (artifacts/<run-id>); the state file lives there.
	ArtifactFolder string
	// Out receives progress lines; it is GinkgoWriter behind the redactor.
	Out      io.Writer
	Redactor *redact.Redactor
	// Resume re-attaches to stages that passed in the kept run (RESUME=1).
	Resume bool
	// SkipCleanup keeps what the run created (SKIP_CLEANUP=1).
	SkipCleanup bool
	// External means the clusters were built by something else (make verify):
	// stages do not require the lifecycle stages to have passed, and nothing is cleaned up.
	External bool

	mu       sync.Mutex
	clusters map[string]*Cluster
	values   map[string]any
	closers  []closer
}

// Cluster is a cluster of the run, by role: bootstrap, management, workload.
type Cluster struct {
	Role       string
	Name       string
	Namespace  string
	Kubeconfig string
	// Provider is "kind" for the bootstrap cluster, "docker" (CAPD) or "vsphere".
	Provider string
}

// Roles of the clusters of a run.
const (
	RoleBootstrap  = "bootstrap"
	RoleManagement = "management"
	RoleWorkload   = "workload"
	// RoleWindowsWorkload is only checked by make verify, given a kubeconfig.
	RoleWindowsWorkload = "windows-workload"
)

// SetCluster records a cluster the run can use.
func (e *Env) SetCluster(c *Cluster) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.clusters == nil {
		e.clusters = map[string]*Cluster{}
	}
	e.clusters[c.Role] = c
}

// DropCluster forgets a cluster (the kind cluster after move).
func (e *Env) DropCluster(role string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.clusters, role)
}

// Cluster returns the cluster of a role, or nil.
func (e *Env) Cluster(role string) *Cluster {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.clusters[role]
}

// Clusters returns the live clusters of the run.
func (e *Env) Clusters() []*Cluster {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []*Cluster
	for _, role := range []string{RoleBootstrap, RoleManagement, RoleWorkload, RoleWindowsWorkload} {
		if c, ok := e.clusters[role]; ok {
			out = append(out, c)
		}
	}
	return out
}

// Set stores a value a later stage or the artifact collectors need (the
// vSphere session, the placement report path).
func (e *Env) Set(key string, v any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.values == nil {
		e.values = map[string]any{}
	}
	e.values[key] = v
}

// Get returns a value stored with Set.
func (e *Env) Get(key string) (any, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	v, ok := e.values[key]
	return v, ok
}

// Path returns a path inside the run's artifacts folder.
func (e *Env) Path(elem ...string) string {
	return filepath.Join(append([]string{e.ArtifactFolder}, elem...)...)
}

// Printf writes a progress line.
func (e *Env) Printf(format string, args ...any) {
	fmt.Fprintf(e.Out, format+"\n", args...)
}

// Validate checks what every stage needs.
func (e *Env) Validate() error {
	switch {
	case e == nil:
		return fmt.Errorf("suite Env is nil: the BeforeSuite that builds it did not run or failed")
	case e.Config == nil:
		return fmt.Errorf("Env.Config is nil: load the config in BeforeSuite")
	case e.State == nil:
		return fmt.Errorf("Env.State is nil: create or load the run state in BeforeSuite")
	case e.ArtifactFolder == "":
		return fmt.Errorf("Env.ArtifactFolder is empty")
	case e.Out == nil:
		return fmt.Errorf("Env.Out is nil")
	}
	return nil
}

// closer is something to release when the suite ends (vcsim, sessions).
type closer struct {
	name string
	fn   func(context.Context) error
}

// AddCloser registers fn to run at the end of the suite, after artifacts are
// collected, newest first.
func (e *Env) AddCloser(name string, fn func(context.Context) error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closers = append(e.closers, closer{name, fn})
}

// Close runs the closers, newest first, and returns their errors joined.
func (e *Env) Close(ctx context.Context) error {
	e.mu.Lock()
	cs := e.closers
	e.closers = nil
	e.mu.Unlock()
	var errs []error
	for i := len(cs) - 1; i >= 0; i-- {
		if err := cs[i].fn(ctx); err != nil {
			errs = append(errs, fmt.Errorf("closing %s: %w", cs[i].name, err))
		}
	}
	return errors.Join(errs...)
}
