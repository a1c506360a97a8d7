// Package stages is the stage graph of a harness run: which stages exist, what
// each needs, and the Ginkgo labels that make a label filter on one stage
// select exactly that stage and what it depends on.
package stages

import (
	"fmt"
	"slices"
	"strings"
)

// Stage names. The order of All is the order a full run executes them in.
const (
	OVA        = "ova"
	Bootstrap  = "bootstrap"
	Management = "management"
	Move       = "move"
	Workload   = "workload"
	Placement  = "placement"
	Packages   = "packages"
)

// All stages in run order.
var All = []string{OVA, Bootstrap, Management, Move, Workload, Placement, Packages}

// needs lists each stage's direct prerequisites. The OVA stage stands alone: on
// the local profile nothing consumes its templates, and on vSphere a template
// that was imported earlier is just as good (the management stage validates it).
var needs = map[string][]string{
	OVA:        nil,
	Bootstrap:  nil,
	Management: {Bootstrap},
	Move:       {Management},
	Workload:   {Move},
	Placement:  {Workload},
	Packages:   {Workload},
}

// Needs returns the direct prerequisites of a stage.
func Needs(stage string) []string { return needs[stage] }

// Valid reports whether name is a stage.
func Valid(name string) bool { _, ok := needs[name]; return ok }

// Closure returns the stages that must run for the given ones, in run order.
func Closure(selected ...string) ([]string, error) {
	want := map[string]bool{}
	var visit func(string) error
	visit = func(s string) error {
		if !Valid(s) {
			return fmt.Errorf("unknown stage %q; stages are: %s", s, strings.Join(All, ", "))
		}
		if want[s] {
			return nil
		}
		want[s] = true
		for _, n := range needs[s] {
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
	for _, s := range All {
		if want[s] {
			out = append(out, s)
		}
	}
	return out, nil
}

// Dependents returns the stages that need stage, directly or not, in run order.
func Dependents(stage string) []string {
	var out []string
	for _, s := range All {
		if s == stage {
			continue
		}
		c, _ := Closure(s)
		if slices.Contains(c, stage) {
			out = append(out, s)
		}
	}
	return out
}

// Labels are the Ginkgo labels of a stage's specs: its own name plus the name
// of every stage that depends on it. `--label-filter=move` therefore selects
// bootstrap, management and move and nothing after; no wrapper has to expand
// the dependency graph, so plain `ginkgo --label-filter` works too.
func Labels(stage string) []string {
	return append([]string{stage}, Dependents(stage)...)
}
