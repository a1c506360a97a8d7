package suites

import (
	"context"
	"fmt"
	"slices"

	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/stages"
)

// Provisioner is how a run's clusters are made, moved and deleted: Cluster
// API driven by the harness with kind and clusterctl (Clusterctl, the
// stages' own specs), or a CLI that does it its own way (the tanzu CLI,
// suites/tanzucli). The profile's driver: names one; the registry turns the
// name into the value once, when the config is loaded, and nothing compares
// the name again.
//
// The stages stay the same whichever provisioner runs them: their names,
// needs, labels and categories, so FOCUS=move means bootstrap → management
// → move with either. Only what runs inside a lifecycle stage changes.
type Provisioner interface {
	// Name is the profile's driver: value (config.DriverClusterctl, ...).
	Name() string
	// Bindings are the provisioner's own specs for the lifecycle stages it
	// runs its own way, and what it adds to the teardown.
	Bindings() Bindings
}

// Bindings are a provisioner's parts of a run. A zero Binding keeps the
// stage's own spec.
type Bindings struct {
	Bootstrap, Management, Move, Workload Binding
	// CleanupIntervals are interval keys the cleanup scope reads only with
	// this provisioner.
	CleanupIntervals []string
	// CompleteCleanup adds to the teardown's options what the provisioner's
	// deleters need from the run (the CLI that deletes its clusters).
	CompleteCleanup func(env *Env, o *CleanupOptions)
}

// Binding is how a provisioner runs one lifecycle stage.
type Binding struct {
	// Spec replaces the stage's Spec; nil keeps it.
	Spec func(ctx context.Context, env func() *Env)
	// Doc replaces the stage's Doc in `harness plan`.
	Doc string
	// Intervals are the interval keys the stage reads only with this
	// provisioner: known to every profile, required only with it.
	Intervals []string
	// Kinds are the resource kinds the stage records with this provisioner;
	// Cleanup must have a deleter for each.
	Kinds []string
	// Cleanup adds deleters and leak checks to the stage's own (the
	// resources a run recorded with the other provisioner are still
	// deleted).
	Cleanup func(o CleanupOptions) StageCleanup
}

// CLIDelete runs a provisioner's own CLI to delete what it made (`tanzu
// cluster delete`), each command bounded by the provisioner's own timeout:
// name names the transcript, args are the CLI's. It returns the command as
// run.
type CLIDelete func(ctx context.Context, name string, args []string, prefix string) (string, error)

// Clusterctl is the harness's own provisioner: kind, clusterctl and Cluster
// API, the stages' own specs.
var Clusterctl Provisioner = clusterctlProvisioner{}

type clusterctlProvisioner struct{}

func (clusterctlProvisioner) Name() string       { return config.DriverClusterctl }
func (clusterctlProvisioner) Bindings() Bindings { return Bindings{} }

// bindingOf is a provisioner's binding for one of the registry's stages.
func (b Bindings) bindingOf(stage string) Binding {
	switch stage {
	case Bootstrap.Name:
		return b.Bootstrap
	case Management.Name:
		return b.Management
	case Move.Name:
		return b.Move
	case Workload.Name:
		return b.Workload
	}
	return Binding{}
}

// WithProvisioners returns the registry with more provisioners a profile
// may choose with driver: (Clusterctl is always there).
func (r *Registry) WithProvisioners(ps ...Provisioner) *Registry {
	out := *r
	out.provisioners = append(slices.Clone(r.provisionersOrDefault()), ps...)
	return &out
}

func (r *Registry) provisionersOrDefault() []Provisioner {
	if len(r.provisioners) == 0 {
		return []Provisioner{Clusterctl}
	}
	return r.provisioners
}

// Provisioner returns the provisioner the profile's driver: names, or an
// error that lists the ones this binary has.
func (r *Registry) Provisioner(driver string) (Provisioner, error) {
	var names []string
	for _, p := range r.provisionersOrDefault() {
		if p.Name() == driver {
			return p, nil
		}
		names = append(names, p.Name())
	}
	return nil, fmt.Errorf("driver %q: this registry has the provisioners %v", driver, names)
}

// DriverIntervalKeys are the interval keys only one provisioner reads, by
// driver and scope, for the stages and scopes of this registry
// (config.LoadOptions.DriverIntervals). Every provisioner of the registry
// has an entry, one that reads no interval of its own too: a driver without
// one is not linked, which config validation then says.
func (r *Registry) DriverIntervalKeys() map[string]map[string][]string {
	out := map[string]map[string][]string{}
	for _, p := range r.provisionersOrDefault() {
		bs := p.Bindings()
		byScope := map[string][]string{}
		for _, name := range r.Names() {
			if iv := bs.bindingOf(name).Intervals; len(iv) > 0 {
				byScope[name] = slices.Clone(iv)
			}
		}
		if len(bs.CleanupIntervals) > 0 && slices.ContainsFunc(r.Scopes(), func(s stages.Scope) bool { return s.Name == ScopeCleanup }) {
			byScope[ScopeCleanup] = slices.Clone(bs.CleanupIntervals)
		}
		out[p.Name()] = byScope
	}
	return out
}

// ForDriver is ForProvisioner for the provisioner the profile's driver:
// names; the registry itself for a name it does not have (the config's
// validation says so, with the fix).
func (r *Registry) ForDriver(driver string) *Registry {
	p, err := r.Provisioner(driver)
	if err != nil {
		return r
	}
	return r.ForProvisioner(p)
}

// ForProvisioner returns the registry as a provisioner runs it: its Specs
// in place of the stages' own, its interval keys added to the stages' and
// the cleanup scope's (so Env.Interval accepts them and `harness plan -v`
// lists them), its resource kinds and cleanup added. The registry itself
// for a provisioner with no bindings.
func (r *Registry) ForProvisioner(p Provisioner) *Registry {
	bs := p.Bindings()
	ss := slices.Clone(r.stages)
	changed := len(bs.CleanupIntervals) > 0
	for i, s := range ss {
		b := bs.bindingOf(s.Name)
		if b.Spec == nil && b.Doc == "" && len(b.Intervals)+len(b.Kinds) == 0 && b.Cleanup == nil {
			continue
		}
		changed = true
		if b.Spec != nil {
			// The provisioner's spec leaves no check running for a join.
			ss[i].Spec, ss[i].JoinAfter = b.Spec, ""
		}
		if b.Doc != "" {
			ss[i].Doc = b.Doc
		}
		ss[i].Intervals = appendNew(s.Intervals, b.Intervals...)
		ss[i].Kinds = appendNew(s.Kinds, b.Kinds...)
		if b.Cleanup != nil {
			ss[i].Cleanup = joinCleanup(s.Cleanup, b.Cleanup)
		}
	}
	if !changed {
		return r
	}
	scopes := r.Scopes()
	for i, sc := range scopes {
		if sc.Name == ScopeCleanup {
			scopes[i].Intervals = appendNew(sc.Intervals, bs.CleanupIntervals...)
		}
	}
	out, err := NewRegistry(scopes, ss...)
	if err != nil {
		panic(fmt.Sprintf("stage registry for provisioner %s: %v", p.Name(), err))
	}
	out.provisioners = r.provisioners
	return out
}

func appendNew(s []string, more ...string) []string {
	out := slices.Clone(s)
	for _, m := range more {
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// joinCleanup is a stage's cleanup with a provisioner's added.
func joinCleanup(a, b func(o CleanupOptions) StageCleanup) func(o CleanupOptions) StageCleanup {
	return func(o CleanupOptions) StageCleanup {
		var out StageCleanup
		for _, f := range []func(o CleanupOptions) StageCleanup{a, b} {
			if f != nil {
				out.add(f(o))
			}
		}
		return out
	}
}
