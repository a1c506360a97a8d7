// Package stages is the stage registry of a harness run: which stages exist,
// in which order, what each needs, which interval keys it reads, who acts
// first when it fails, and which resource kinds it records. Everything that
// used to repeat this knowledge (Ginkgo labels, the Makefile's stage list,
// `harness plan`, interval validation, failure classification, cleanup) asks
// a Registry instead, so a new stage is one Definition.
//
// The package holds data only: the Ginkgo specs that run a stage live beside
// its Definition in suites/<stage>, and the registry of the lifecycle suite is
// suites/registry.
package stages

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Failure categories: who has to act first when a stage fails. The artifacts
// classifier uses the failing stage's category when no collected evidence
// points elsewhere.
const (
	// Infrastructure: vCenter, the Docker engine, the VMs or node containers.
	Infrastructure = "infrastructure"
	// Provider: Cluster API, its providers, their webhooks and bootstrap.
	Provider = "provider"
	// Package: a Carvel package did not reconcile.
	Package = "package"
	// Placement: pods not where the placement matrix wants them, or nowhere.
	Placement = "placement"
	// Harness: the harness itself (a panic, bad input, a check of its own).
	Harness = "harness"
	// Conformance: Kubernetes' conformance tests failed on a cluster that
	// every earlier check passed (the release's Kubernetes or its add-ons).
	Conformance = "conformance"
)

// Categories lists the valid failure categories.
var Categories = []string{Infrastructure, Provider, Package, Placement, Harness, Conformance}

// Definition is everything the harness knows about a stage apart from the
// code that runs it.
type Definition struct {
	// Name is the stage's name: its Ginkgo container and label, its key in the
	// state file, its interval scope and the FOCUS word that selects it.
	Name string
	// Needs are the stages that must pass before this one runs.
	Needs []string
	// ProfileNeeds are more needs on one profile only (Registry.ForProfile),
	// e.g. CAPV clusters clone the template the ova stage imports.
	ProfileNeeds map[string][]string
	// Intervals are the interval keys the stage looks up, each resolved as
	// "<Name>/<key>" with a "default/<key>" fallback. One key per wait.
	Intervals []string
	// Category says who acts first when the stage fails (Infrastructure, ...).
	Category string
	// Kinds are the run.Resource kinds the stage records before creating
	// them; cleanup needs a deleter for each.
	Kinds []string
	// Doc is one line for `harness plan` and the README.
	Doc string
	// DayTwo marks what users do after day one (upgrade, scale,
	// remediate): its specs carry the DayTwoLabel, which a plain make e2e
	// leaves out and the release-qualification run (QUALIFY=1) or a FOCUS
	// that names the stage selects.
	DayTwo bool
}

// DayTwoLabel is the Ginkgo label of the day-two stages.
const DayTwoLabel = "day-two"

// Scope is an interval scope that is not a stage: teardown steps such as
// cleanup and artifacts collection read their intervals the same way.
type Scope struct {
	Name      string
	Intervals []string
}

// Registry is an ordered set of stage definitions. Its order is the order a
// full run executes them in; a stage may only need stages before it.
type Registry struct {
	defs   []Definition
	scopes []Scope
}

// NewRegistry checks the definitions (unique names, known needs that come
// earlier, a valid category, interval keys present) and returns the registry.
func NewRegistry(defs []Definition, scopes ...Scope) (*Registry, error) {
	var errs []error
	seen := map[string]bool{}
	for _, d := range defs {
		switch {
		case d.Name == "" || strings.ContainsAny(d.Name, " /,|&!()"):
			errs = append(errs, fmt.Errorf("stage %q: a name is one word (it becomes a Ginkgo label and an interval scope)", d.Name))
		case seen[d.Name]:
			errs = append(errs, fmt.Errorf("stage %q is registered twice", d.Name))
		}
		for _, n := range d.Needs {
			if !seen[n] {
				errs = append(errs, fmt.Errorf("stage %q needs %q, which is not registered before it", d.Name, n))
			}
		}
		if !slices.Contains(Categories, d.Category) {
			errs = append(errs, fmt.Errorf("stage %q: category %q is not one of %s", d.Name, d.Category, strings.Join(Categories, ", ")))
		}
		seen[d.Name] = true
	}
	for _, s := range scopes {
		if seen[s.Name] || s.Name == "default" {
			errs = append(errs, fmt.Errorf("interval scope %q clashes with a stage or with default", s.Name))
		}
		seen[s.Name] = true
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("stage registry: %w", err)
	}
	return &Registry{defs: slices.Clone(defs), scopes: slices.Clone(scopes)}, nil
}

// Scopes returns the interval scopes that are not stages.
func (r *Registry) Scopes() []Scope { return slices.Clone(r.scopes) }

// WithProfileNeeds returns the definitions with each one's ProfileNeeds for
// profile added to its Needs, and whether any changed.
func WithProfileNeeds(defs []Definition, profile string) ([]Definition, bool) {
	out, changed := slices.Clone(defs), false
	for i, d := range out {
		if extra := d.ProfileNeeds[profile]; len(extra) > 0 {
			out[i].Needs = append(slices.Clone(d.Needs), extra...)
			changed = true
		}
	}
	return out, changed
}

// Names returns the stage names in run order.
func (r *Registry) Names() []string {
	out := make([]string, len(r.defs))
	for i, d := range r.defs {
		out[i] = d.Name
	}
	return out
}

// Get returns a stage's definition.
func (r *Registry) Get(name string) (Definition, bool) {
	for _, d := range r.defs {
		if d.Name == name {
			return d, true
		}
	}
	return Definition{}, false
}

// Needs returns the direct prerequisites of a stage.
func (r *Registry) Needs(name string) []string {
	d, _ := r.Get(name)
	return d.Needs
}

// Closure returns the stages that must run for the given ones, in run order.
func (r *Registry) Closure(selected ...string) ([]string, error) {
	want := map[string]bool{}
	var visit func(string) error
	visit = func(s string) error {
		d, ok := r.Get(s)
		if !ok {
			return fmt.Errorf("unknown stage %q; stages are: %s", s, strings.Join(r.Names(), ", "))
		}
		if want[s] {
			return nil
		}
		want[s] = true
		for _, n := range d.Needs {
			if err := visit(n); err != nil {
				return err
			}
		}
		return nil
	}
	for _, s := range selected {
		if err := visit(s); err != nil {
			return nil, err
		}
	}
	var out []string
	for _, d := range r.defs {
		if want[d.Name] {
			out = append(out, d.Name)
		}
	}
	return out, nil
}

// Dependents returns the stages that need stage, directly or not, in run order.
func (r *Registry) Dependents(stage string) []string {
	var out []string
	for _, d := range r.defs {
		if d.Name == stage {
			continue
		}
		if c, _ := r.Closure(d.Name); slices.Contains(c, stage) {
			out = append(out, d.Name)
		}
	}
	return out
}

// Labels are the Ginkgo labels of a stage's specs: its own name plus the name
// of every stage that depends on it. `--label-filter=move` therefore selects
// bootstrap, management and move and nothing after; no wrapper has to expand
// the dependency graph, so plain `ginkgo --label-filter` works too.
func (r *Registry) Labels(stage string) []string {
	out := append([]string{stage}, r.Dependents(stage)...)
	if d, ok := r.Get(stage); ok && d.DayTwo {
		out = append(out, DayTwoLabel)
	}
	return out
}

// IntervalKeys returns, per scope (every stage, then the extra scopes), the
// interval keys it reads. Config validation requires each to resolve and
// rejects keys nobody reads.
func (r *Registry) IntervalKeys() map[string][]string {
	out := map[string][]string{}
	for _, d := range r.defs {
		out[d.Name] = slices.Clone(d.Intervals)
	}
	for _, s := range r.scopes {
		out[s.Name] = slices.Clone(s.Intervals)
	}
	return out
}

// Registered reports whether scope (a stage or an extra scope) registers
// the interval key.
func (r *Registry) Registered(scope, key string) bool {
	for _, d := range r.defs {
		if d.Name == scope {
			return slices.Contains(d.Intervals, key)
		}
	}
	for _, s := range r.scopes {
		if s.Name == scope {
			return slices.Contains(s.Intervals, key)
		}
	}
	return false
}

// Category returns the failure category of a stage, and false when name is
// not a registered stage (a failure in BeforeSuite, say).
func (r *Registry) Category(name string) (string, bool) {
	d, ok := r.Get(name)
	return d.Category, ok
}

// Owner returns the stage that records resources of a kind.
func (r *Registry) Owner(kind string) (Definition, bool) {
	for _, d := range r.defs {
		if slices.Contains(d.Kinds, kind) {
			return d, true
		}
	}
	return Definition{}, false
}
