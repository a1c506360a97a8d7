package suites

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tkg-e2e/harness/framework/clusters"
	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/redact"
	"github.com/tkg-e2e/harness/framework/run"
)

// EnvOptions say how to build the Env of a suite.
type EnvOptions struct {
	// Registry is the stage registry the config's intervals are checked against.
	Registry *Registry
	// ConfigPath and Overrides name the profile and the files merged over it.
	ConfigPath string
	Overrides  []string
	// ArtifactFolder is the run folder; created when missing.
	ArtifactFolder string
	// Resume loads the state of the kept run in ArtifactFolder instead of starting one.
	Resume bool
	// ResumeForeign lets Resume attach to a run another OS user started
	// (RESUME_FOREIGN=1; the environment variable works too).
	ResumeForeign bool
	SkipCleanup   bool
	// External: the clusters come from elsewhere (make verify).
	External bool
	// ReadOnly: the checks must not write to the clusters (Env.ReadOnly).
	ReadOnly bool
	// Out receives progress (GinkgoWriter); the Env wraps it in the redactor.
	Out io.Writer
	// Context bounds the wait for a leased testbed (profile lease:); Ctrl-C
	// while queued ends it. Background when nil.
	Context context.Context
}

// NewEnv builds the Env every suite entry point shares: artifacts folder,
// redactor, config validated against the registry, every secret of the config
// registered with the redactor, run state (new, or the kept run's when
// resuming) and the kubeconfig folder. On error it still returns the Env
// with whatever was built, so the reports can say what went wrong.
func NewEnv(o EnvOptions) (*Env, error) {
	if o.Registry == nil || o.ArtifactFolder == "" || o.Out == nil {
		return nil, errors.New("suites.NewEnv: Registry, ArtifactFolder and Out are required")
	}
	folder, err := filepath.Abs(o.ArtifactFolder)
	if err != nil {
		return nil, err
	}
	env := &Env{Run: &Run{Registry: o.Registry, ArtifactFolder: folder, Redactor: redact.New(), Resume: o.Resume,
		SkipCleanup: o.SkipCleanup, External: o.External, ReadOnly: o.ReadOnly}}
	env.Out = env.Redactor.Writer(o.Out)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return env, fmt.Errorf("cannot create the artifacts folder %s: %w", folder, err)
	}
	cfg, err := config.Load(config.LoadOptions{Path: o.ConfigPath, Overrides: o.Overrides, Intervals: o.Registry.IntervalKeys(),
		DriverIntervals: o.Registry.DriverIntervalKeys()})
	if err != nil {
		return env, fmt.Errorf("the harness config is not valid:\n%w", err)
	}
	env.Config = cfg
	// Some needs hold on one profile only (CAPV clusters need the ova stage);
	// the driver binds the cluster stages to its own specs.
	prov, err := o.Registry.Provisioner(cfg.Driver)
	if err != nil {
		return env, fmt.Errorf("the harness config is not valid: %w", err)
	}
	env.Provisioner = prov
	env.Registry = o.Registry.ForProfile(cfg.Profile).ForProvisioner(prov)
	env.Redactor.Add(cfg.Secrets()...)

	// Opening the run takes its lock for the life of the process: a second
	// process on the same folder is told who has it.
	if o.Resume {
		env.State, err = run.Resume(folder, o.ResumeForeign || os.Getenv("RESUME_FOREIGN") == "1")
	} else {
		env.State, err = run.New(folder, filepath.Base(folder), cfg.Profile, cfg.Source)
	}
	if err != nil {
		return env, err
	}
	if note := env.State.LockNote(); note != "" {
		env.Printf("note: %s", note)
	}
	if o.Resume {
		env.Printf("resuming %s", env.State.Describe())
	}
	env.KubeconfigDir = kubeconfigDir(env.State, o.Resume)
	if err := os.MkdirAll(env.KubeconfigDir, 0o700); err != nil {
		return env, fmt.Errorf("cannot create the kubeconfig folder %s: %w", env.KubeconfigDir, err)
	}
	// A leased testbed comes before anything else the run does, and its
	// user data completes the config: load it again with those values.
	if cfg.Lease != nil && !o.External {
		ctx := o.Context
		if ctx == nil {
			ctx = context.Background()
		}
		vars, err := env.takeLease(ctx, cfg.Lease)
		if err != nil {
			env.Config = nil // nothing was created: nothing to collect or clean
			return env, err
		}
		leased, err := config.Load(config.LoadOptions{Path: o.ConfigPath, Overrides: o.Overrides,
			Intervals: o.Registry.IntervalKeys(), DriverIntervals: o.Registry.DriverIntervalKeys(), LeaseValues: vars})
		if err != nil {
			env.Config = nil
			name := env.State.LeaseRecord().Name
			if o.Resume {
				// The kept run's clusters are on that testbed: it stays the run's.
				env.stopHeartbeat()
				return env, fmt.Errorf("the config completed with the kept run's testbed %s is not valid (the lease is kept):\n%w", name, err)
			}
			env.releaseUnused(ctx)
			return env, fmt.Errorf("the config completed with testbed %s's user data is not valid (the lease was released):\n%w", name, err)
		}
		cfg = leased
		env.Config = cfg
		env.Redactor.Add(cfg.Secrets()...)
	}
	// Cluster names carry the run's short ID (clusters.uniqueNames); a
	// resumed run keeps the names its state recorded.
	if !o.External {
		if err := cfg.SetRunNames(env.State.ShortID(), keptNames(env.State, cfg.ClusterIDs())); err != nil {
			return env, err
		}
	}
	// The profile's variables reach clusterctl through run-local config
	// files (they can hold the vCenter password: 0600, beside the
	// kubeconfigs, removed with them).
	for _, id := range append([]string{""}, cfg.ClusterIDs()...) {
		if err := clusters.WriteClusterctlConfig(env.ClusterctlConfig(id), cfg.ClusterctlConfigBase(id), cfg.ClusterctlVariables(id)); err != nil {
			return env, err
		}
	}
	return env, nil
}

// kubeconfigDir is a run's private folder outside the artifacts: its
// kubeconfigs, clusterctl configs, the tanzu CLI's home and lease secrets.
// The run ID alone does not name it: a run's ID is its artifacts folder's
// base name, so two runs at once with ARTIFACTS=/a/art and /b/art shared
// one folder (and one tanzu home) before; their short IDs differ. A kept
// run of an older version, whose folder has the run ID only, keeps it.
func kubeconfigDir(st *run.State, kept bool) string {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	base = filepath.Join(base, "tkg-e2e")
	name := st.RunID
	if !strings.HasSuffix(name, "-"+st.Short) {
		name += "-" + st.Short
	}
	dir := filepath.Join(base, name)
	if legacy := filepath.Join(base, st.RunID); kept && legacy != dir && isDir(legacy) && !isDir(dir) {
		return legacy
	}
	return dir
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// keptNames are the cluster names, by cluster ID, that the run state recorded.
func keptNames(s *run.State, ids []string) map[string]string {
	out := map[string]string{}
	for _, id := range append([]string{RoleBootstrap}, ids...) {
		for _, kind := range []string{"kind-cluster", clusters.ResourceKind} {
			if r, ok := s.Resource(kind, id); ok && r.ClusterID() == id {
				out[id] = r.Name
			}
		}
	}
	return out
}
