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

// Run is a run's context: the loaded config, the run state, the artifacts
// folder and the redacted output, the Boskos lease it holds (lease.go) and
// what ends with it. It knows no cluster: that is ClusterSet.
type Run struct {
	Config *config.Config
	State  *run.State
	// Registry is the stage registry the run was built from.
	Registry *Registry
	// Provisioner makes, moves and deletes the run's clusters (driver:).
	Provisioner Provisioner
	// ArtifactFolder is the run's folder (artifacts/<run-id>); the state file lives there.
	ArtifactFolder string
	// KubeconfigDir holds the run's kubeconfigs, outside the artifacts folder
	// because they carry client keys and artifacts get uploaded.
	KubeconfigDir string
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
	// ReadOnly keeps the checks from writing to the clusters (make verify
	// READ_ONLY=1): no smoke workload, no scratch namespace for the
	// admission probe. What that leaves out is reported as skipped.
	ReadOnly bool

	mu sync.Mutex
	// secrets the run handled that are not in the config (the vcsim
	// password), and all of them as they were before cleanup removed the
	// kubeconfigs, for the final artifacts scan.
	runSecrets, scanSecrets []string
	closers                 []closer
	// lease is the Boskos testbed the run holds (profile lease:), nil without one.
	lease *runLease
}

// AddRunSecret registers a secret value the run handles that the config does
// not know (a simulator's password): masked in all output and scanned for in
// the artifacts at the end.
func (r *Run) AddRunSecret(v string) {
	r.Redactor.Add(v)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runSecrets = append(r.runSecrets, v)
}

// Path returns a path inside the run's artifacts folder.
func (r *Run) Path(elem ...string) string {
	return filepath.Join(append([]string{r.ArtifactFolder}, elem...)...)
}

// KubeconfigPath is where the kubeconfig of a cluster of the run is kept.
func (r *Run) KubeconfigPath(cluster string) string {
	return filepath.Join(r.KubeconfigDir, cluster+".kubeconfig")
}

// ClusterctlConfig is the run-local clusterctl config file clusterctl reads
// for a cluster, by ID ("" for `clusterctl init` of the bootstrap cluster
// and for move): the profile's clusterctl.configPath with the variables for
// that cluster (config.ClusterctlVariables). NewEnv writes them.
func (r *Run) ClusterctlConfig(id string) string {
	name := "clusterctl.yaml"
	if id != "" {
		name = "clusterctl-" + id + ".yaml"
	}
	return filepath.Join(r.KubeconfigDir, name)
}

// Printf writes a progress line.
func (r *Run) Printf(format string, args ...any) {
	fmt.Fprintf(r.Out, format+"\n", args...)
}

// Interval returns the interval of one wait of a stage. The key must be one
// the stage's Definition registers, so config validation has checked it
// resolves; a key that is not registered is a harness bug and panics with
// what to fix.
func (r *Run) Interval(stage, key string) config.Interval {
	if !r.Registry.Registered(stage, key) {
		panic(fmt.Sprintf("interval %s/%s is not registered: add %q to the Intervals of %s's Definition", stage, key, key, stage))
	}
	return r.Config.MustInterval(stage, key)
}

// closer is something to release when the suite ends (vcsim, sessions).
type closer struct {
	name string
	fn   func(context.Context) error
}

// AddCloser registers fn to run at the end of the suite, after artifacts are
// collected, newest first.
func (r *Run) AddCloser(name string, fn func(context.Context) error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closers = append(r.closers, closer{name, fn})
}

// Close runs the closers, newest first, and returns their errors joined.
func (r *Run) Close(ctx context.Context) error {
	r.mu.Lock()
	cs := r.closers
	r.closers = nil
	r.mu.Unlock()
	var errs []error
	for i := len(cs) - 1; i >= 0; i-- {
		if err := cs[i].fn(ctx); err != nil {
			errs = append(errs, fmt.Errorf("closing %s: %w", cs[i].name, err))
		}
	}
	return errors.Join(errs...)
}

// Validate checks what every stage needs.
func (r *Run) Validate() error {
	switch {
	case r == nil:
		return fmt.Errorf("suite Env is nil: the BeforeSuite that builds it did not run or failed")
	case r.Config == nil:
		return fmt.Errorf("Env.Config is nil: load the config in BeforeSuite (suites.NewEnv)")
	case r.State == nil:
		return fmt.Errorf("Env.State is nil: create or load the run state in BeforeSuite (suites.NewEnv)")
	case r.Registry == nil:
		return fmt.Errorf("Env.Registry is nil: build the Env with suites.NewEnv")
	case r.ArtifactFolder == "" || r.KubeconfigDir == "":
		return fmt.Errorf("Env.ArtifactFolder or Env.KubeconfigDir is empty: build the Env with suites.NewEnv")
	case r.Out == nil || r.Redactor == nil:
		return fmt.Errorf("Env.Out or Env.Redactor is nil: build the Env with suites.NewEnv")
	}
	return nil
}
