package suites

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/tkg-e2e/harness/framework/assert"
	"github.com/tkg-e2e/harness/framework/cleanup"
	"github.com/tkg-e2e/harness/framework/clusters"
	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/framework/stages"
	"github.com/tkg-e2e/harness/framework/vsphere"
)

// LifecycleStages are the lifecycle suite's stages, in run order
// (suites/lifecycle adds the provisioners). Adding a stage is one file in
// suites/ that declares its Stage, and one entry here. The upgrade comes
// last of the day-two stages: with scale and remediate it runs beside
// management-upgrade's self-hosted rollout, which waits mostly on its own
// controllers (beside provider-upgrade, which makes clusters and loads
// images, the two took as long as one after the other, 2026-11-29).
var LifecycleStages = []Stage{OVA, Bootstrap, Management, Move, Workload, Health, Smoke, Placement, Packages, Conformance,
	ProviderUpgrade, ManagementUpgrade, Scale, Remediate, Upgrade}

// TeardownScopes are the interval scopes SuiteTeardown reads; every suite's
// registry carries them.
var TeardownScopes = []stages.Scope{
	{Name: ScopePreflight, Intervals: []string{"connect"}},
	{Name: ScopeCleanup, Intervals: []string{"delete-cluster", "delete-kind", "connect"}},
	{Name: ScopeArtifacts, Intervals: []string{"collect", "connect"}},
}

// Interval scopes of the teardown steps, which are not stages.
const (
	ScopePreflight = "preflight"
	ScopeCleanup   = "cleanup"
	ScopeArtifacts = "artifacts"
)

// Stage is one stage of a suite: its Definition (name, needs, intervals,
// failure category, resource kinds), the binding that declares its spec, and
// the cleanup of the resources it records.
type Stage struct {
	stages.Definition
	// Spec declares the stage's Ginkgo nodes inside its container. env is
	// read only when specs run (BeforeSuite fills it); a Spec turns it into
	// the explicit input of its XxxSpec.
	Spec func(ctx context.Context, env func() *Env)
	// Cleanup returns a deleter for every kind in Kinds, and the leak checks
	// that prove none of them is left. Nil when the stage records nothing.
	Cleanup func(o CleanupOptions) StageCleanup
	// JoinAfter names the later stage after which the stage's join spec
	// (JoinSpec) is declared, when the stage leaves a check running beside
	// the stages after it (Env.StartTail). The join carries the stage's
	// labels, so FOCUS selects it with the stage; when the named stage is
	// not selected, nothing runs in between and the join follows the stage.
	JoinAfter string
	// Preflight checks the stage's own input when the run will reach it:
	// SuiteSetup calls it before the first stage, so a missing image or a
	// bad file of the last stage fails in seconds, not after an hour.
	Preflight func(ctx context.Context, e *Env) error
	// Assertion is an assertion stage's check, so a day-two stage can run
	// it again on the cluster it changed (nil for other stages).
	Assertion func(e *Env) (assert.Check, error)
}

// CleanupOptions are what deleters and leak checks are built from: the
// suite teardown fills them from the config, `harness cleanup` from flags.
type CleanupOptions struct {
	State *run.State
	// ClusterTimeout bounds deleting one Cluster API cluster; KindTimeout one kind cluster.
	ClusterTimeout, KindTimeout time.Duration
	Interval                    time.Duration
	Progress                    io.Writer
	Prefix                      string
	// VSphere, when the clusters are VMs in a vCenter (CAPV), opens a
	// session for the vCenter-side leak check; Placement says where the
	// run's VMs are. Nil on the local profile (CAPD's nodes are containers).
	VSphere   func(ctx context.Context) (*vsphere.Session, error)
	Placement vsphere.Placement
	// SelfHosted deletes a self-hosted management cluster as the profile's
	// cleanup.selfHosted says: through a throw-away bootstrap cluster
	// (moveBack), or clusters.RemoveContainers (removeContainers). Nil
	// removes the run's containers by ID too, without looking for a
	// half-moved cluster (CAPD only: `make clean-run` without a config).
	SelfHosted clusters.SelfHostedFunc
	// SelfHostedByID says SelfHosted is clusters.RemoveContainers, so such
	// deletions may run beside others (clusters.DeletesIndependently).
	SelfHostedByID bool
	// PrepareSelfHosted starts, before the deletions, what SelfHosted will
	// need (cleanup.Input.Prepare); nil when it needs nothing ahead.
	PrepareSelfHosted func(ctx context.Context, live []run.Resource) (release func(), owned []string)
	// Managed, when set (cleanup.managed: removeContainers), deletes a
	// cluster a management cluster manages instead of a Cluster API delete
	// through that management cluster.
	Managed clusters.ManagedFunc
	// DeleteTemplates: ova.deleteTemplates (templates are kept by default).
	DeleteTemplates bool
	// CLIDelete deletes with the provisioner's own CLI what it made
	// (Bindings.CompleteCleanup sets it); nil when the run's provisioner has
	// no CLI of its own, or `harness cleanup` has no config.
	CLIDelete CLIDelete
}

// StageCleanup is a stage's part of the cleanup.
type StageCleanup struct {
	Deleters   map[string]cleanup.Deleter
	LeakChecks []cleanup.LeakCheck
	// Independent says, by kind, whether that kind's Deleter deletes a
	// resource touching nothing else of the run, so it may run beside the
	// others (cleanup.Input.Independent); a kind without an entry deletes
	// one at a time.
	Independent map[string]func(r run.Resource) bool
	// Together says, by kind, which two resources of that kind may be
	// deleted at the same time (cleanup.Input.Together).
	Together map[string]func(a, b run.Resource) bool
}

// add merges o into c: a kind o has a Deleter for takes o's Deleter and
// o's Independent and Together entries (or none), never c's.
func (c *StageCleanup) add(o StageCleanup) {
	if c.Deleters == nil {
		c.Deleters = map[string]cleanup.Deleter{}
	}
	if c.Independent == nil {
		c.Independent = map[string]func(run.Resource) bool{}
	}
	if c.Together == nil {
		c.Together = map[string]func(a, b run.Resource) bool{}
	}
	for k, d := range o.Deleters {
		c.Deleters[k] = d
		delete(c.Independent, k)
		delete(c.Together, k)
	}
	maps.Copy(c.Independent, o.Independent)
	maps.Copy(c.Together, o.Together)
	c.LeakChecks = append(c.LeakChecks, o.LeakChecks...)
}

// Registry is a suite's stages and the stages.Registry built from their
// definitions.
type Registry struct {
	*stages.Registry
	stages []Stage
	// provisioners are the ones a profile may choose (WithProvisioners);
	// empty means Clusterctl alone.
	provisioners []Provisioner
}

// NewRegistry checks the stages (see stages.NewRegistry; and every stage
// that records a resource kind has a deleter for it) and returns the registry.
func NewRegistry(scopes []stages.Scope, ss ...Stage) (*Registry, error) {
	defs := make([]stages.Definition, len(ss))
	var errs []error
	for i, s := range ss {
		defs[i] = s.Definition
		if s.Spec == nil {
			errs = append(errs, fmt.Errorf("stage %q has no Spec", s.Name))
		}
		if s.JoinAfter != "" && !slices.ContainsFunc(ss[i+1:], func(o Stage) bool { return o.Name == s.JoinAfter }) {
			errs = append(errs, fmt.Errorf("stage %q joins after %q, which is not registered after it", s.Name, s.JoinAfter))
		}
		if len(s.Kinds) == 0 {
			continue
		}
		if s.Cleanup == nil {
			errs = append(errs, fmt.Errorf("stage %q records %v but has no Cleanup", s.Name, s.Kinds))
			continue
		}
		c := s.Cleanup(CleanupOptions{})
		for _, k := range s.Kinds {
			if c.Deleters[k] == nil {
				errs = append(errs, fmt.Errorf("stage %q records kind %q but its Cleanup has no deleter for it", s.Name, k))
			}
		}
	}
	sr, err := stages.NewRegistry(defs, scopes...)
	if err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &Registry{Registry: sr, stages: slices.Clone(ss)}, nil
}

// MustRegistry is NewRegistry for the package-level suites.
func MustRegistry(scopes []stages.Scope, ss ...Stage) *Registry {
	r, err := NewRegistry(scopes, ss...)
	if err != nil {
		panic(err)
	}
	return r
}

// ForProfile returns the registry as it applies to a profile: each stage's
// ProfileNeeds for it become needs (with their labels, closures and skip
// reasons). The registry itself when no stage has any.
func (r *Registry) ForProfile(profile string) *Registry {
	defs := make([]stages.Definition, len(r.stages))
	for i, s := range r.stages {
		defs[i] = s.Definition
	}
	defs, changed := stages.WithProfileNeeds(defs, profile)
	if !changed {
		return r
	}
	ss := slices.Clone(r.stages)
	for i := range ss {
		ss[i].Definition = defs[i]
	}
	out, err := NewRegistry(r.Scopes(), ss...)
	if err != nil {
		panic(fmt.Sprintf("stage registry for profile %s: %v", profile, err))
	}
	out.provisioners = r.provisioners
	return out
}

// Stages returns the stages in run order.
func (r *Registry) Stages() []Stage { return slices.Clone(r.stages) }

// JoinsAfter returns the stages whose join spec is declared after stage,
// in registry order.
func (r *Registry) JoinsAfter(stage string) []Stage {
	var out []Stage
	for _, s := range r.stages {
		if s.JoinAfter == stage {
			out = append(out, s)
		}
	}
	return out
}

// Stage returns one stage.
func (r *Registry) Stage(name string) (Stage, bool) {
	if i := slices.Index(r.Names(), name); i >= 0 {
		return r.stages[i], true
	}
	return Stage{}, false
}

// StagesNamed returns the stages of those names, in the order given.
func (r *Registry) StagesNamed(names ...string) ([]Stage, error) {
	ss := make([]Stage, 0, len(names))
	for _, n := range names {
		s, ok := r.Stage(n)
		if !ok {
			return nil, fmt.Errorf("no stage %q in the registry (stages: %s)", n, strings.Join(r.Names(), ", "))
		}
		ss = append(ss, s)
	}
	return ss, nil
}

// Cleanup joins every stage's deleters and leak checks into cleanup's input.
func (r *Registry) Cleanup(o CleanupOptions) cleanup.Input {
	var all StageCleanup
	for _, s := range r.stages {
		if s.Cleanup != nil {
			all.add(s.Cleanup(o))
		}
	}
	all.add(StageCleanup{}) // the maps exist even without a stage cleanup
	return cleanup.Input{State: o.State, Deleters: all.Deleters, LeakChecks: all.LeakChecks, Progress: o.Progress, Prefix: o.Prefix,
		Independent: func(res run.Resource) bool { f := all.Independent[res.Kind]; return f != nil && f(res) },
		Together: func(a, b run.Resource) bool {
			f := all.Together[a.Kind]
			return a.Kind == b.Kind && f != nil && f(a, b)
		},
		Prepare: o.PrepareSelfHosted}
}
