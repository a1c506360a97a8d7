package suites

import (
	"context"
	"fmt"
	"slices"

	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/stages"
)

// DriverBinding is how a cluster driver other than clusterctl (the
// registry's own Specs) runs one stage, or what it adds to a teardown
// scope. The stage keeps its name, needs, labels and category, so FOCUS
// means the same whichever driver makes the clusters; only what runs
// inside the stage changes.
type DriverBinding struct {
	// Spec replaces the stage's Spec; nil keeps it (and is the only choice
	// for a scope).
	Spec func(ctx context.Context, env func() *Env)
	// Doc replaces the stage's Doc in `harness plan`.
	Doc string
	// Intervals are the interval keys the stage (or scope) reads only with
	// this driver: known to every profile, required only with the driver.
	Intervals []string
	// Kinds are the resource kinds the stage records with this driver;
	// Cleanup must have a deleter for each.
	Kinds []string
	// Cleanup adds deleters and leak checks to the stage's own (the
	// resources a run recorded with the other driver are still deleted).
	Cleanup func(o CleanupOptions) StageCleanup
}

// driverBindings are the drivers' bindings: driver → stage or scope →
// binding. A driver's file registers its own (tanzu_driver.go).
var driverBindings = map[string]map[string]DriverBinding{}

// registerDriver adds a driver's bindings; at package init only.
func registerDriver(driver string, bindings map[string]DriverBinding) {
	if _, dup := driverBindings[driver]; dup {
		panic(fmt.Sprintf("driver %s registered twice", driver))
	}
	driverBindings[driver] = bindings
}

// DriverIntervalKeys are the interval keys only one driver reads, by driver
// and scope, for the stages and scopes of this registry
// (config.LoadOptions.DriverIntervals).
func (r *Registry) DriverIntervalKeys() map[string]map[string][]string {
	names := append(r.Names(), scopeNames(r.Scopes())...)
	out := map[string]map[string][]string{}
	for driver, bs := range driverBindings {
		for name, b := range bs {
			if len(b.Intervals) == 0 || !slices.Contains(names, name) {
				continue
			}
			if out[driver] == nil {
				out[driver] = map[string][]string{}
			}
			out[driver][name] = slices.Clone(b.Intervals)
		}
	}
	return out
}

func scopeNames(ss []stages.Scope) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Name)
	}
	return out
}

// ForDriver returns the registry as a driver runs it: the driver's Specs
// in place of the stages' own, its interval keys added to the stages'
// and scopes' (so Env.Interval accepts them and `harness plan -v` lists
// them), its resource kinds and cleanup added. The registry itself for
// clusterctl, and for an unknown driver (config validation rejects it).
func (r *Registry) ForDriver(driver string) *Registry {
	bs := driverBindings[driver]
	if driver == config.DriverClusterctl || len(bs) == 0 {
		return r
	}
	ss := slices.Clone(r.stages)
	for i, s := range ss {
		b, ok := bs[s.Name]
		if !ok {
			continue
		}
		if b.Spec != nil {
			// The driver's spec leaves no check running for a join.
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
	scopes := r.Scopes()
	for i, sc := range scopes {
		if b, ok := bs[sc.Name]; ok {
			scopes[i].Intervals = appendNew(sc.Intervals, b.Intervals...)
		}
	}
	out, err := NewRegistry(scopes, ss...)
	if err != nil {
		panic(fmt.Sprintf("stage registry for driver %s: %v", driver, err))
	}
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

// joinCleanup is a stage's cleanup with a driver's added.
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
