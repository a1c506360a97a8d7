package suites_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/suites"
	"github.com/tkg-e2e/harness/suites/lifecycle"
)

// scratchProvisioner is a provisioner a newcomer adds: it makes workload
// clusters its own way and keeps the stages' own specs for the rest.
type scratchProvisioner struct {
	spec func(ctx context.Context, env func() *suites.Env)
}

func (scratchProvisioner) Name() string { return "scratch" }

func (p scratchProvisioner) Bindings() suites.Bindings {
	return suites.Bindings{
		Workload:         suites.Binding{Spec: p.spec, Doc: "scratch cluster create", Intervals: []string{"scratch-create"}},
		CleanupIntervals: []string{"scratch-delete"},
	}
}

// A provisioner is a value the registry chooses by the profile's driver:
// name; it replaces only the stages it binds, keeps every stage's name,
// needs and labels, and declares the interval keys it reads.
func TestAScratchProvisionerBindsOnlyItsStages(t *testing.T) {
	ran := false
	reg := lifecycle.Registry.WithProvisioners(scratchProvisioner{spec: func(context.Context, func() *suites.Env) { ran = true }})
	p, err := reg.Provisioner("scratch")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{config.DriverClusterctl, config.DriverTanzu} {
		if q, err := reg.Provisioner(name); err != nil || q.Name() != name {
			t.Errorf("Provisioner(%s) = %v, %v", name, q, err)
		}
	}
	if _, err := reg.Provisioner("nope"); err == nil || !strings.Contains(err.Error(), "scratch") || !strings.Contains(err.Error(), "tanzu") {
		t.Errorf("an unknown driver's error should list the provisioners: %v", err)
	}

	got := reg.ForProvisioner(p)
	if !slices.Equal(got.Names(), lifecycle.Registry.Names()) {
		t.Fatalf("stages %v, want %v", got.Names(), lifecycle.Registry.Names())
	}
	for _, s := range got.Stages() {
		base, _ := lifecycle.Registry.Stage(s.Name)
		if !slices.Equal(got.Labels(s.Name), lifecycle.Registry.Labels(s.Name)) || !slices.Equal(s.Needs, base.Needs) {
			t.Errorf("%s: labels or needs changed", s.Name)
		}
		if s.Name == suites.Workload.Name {
			if s.Doc != "scratch cluster create" || !slices.Contains(s.Intervals, "scratch-create") {
				t.Errorf("workload not bound: doc %q, intervals %v", s.Doc, s.Intervals)
			}
			s.Spec(context.Background(), nil)
			continue
		}
		if s.Doc != base.Doc || !slices.Equal(s.Intervals, base.Intervals) {
			t.Errorf("%s was bound though the provisioner does not bind it", s.Name)
		}
	}
	if !ran {
		t.Error("the workload stage does not run the provisioner's spec")
	}
	keys := reg.DriverIntervalKeys()["scratch"]
	if !slices.Equal(keys["workload"], []string{"scratch-create"}) || !slices.Equal(keys[suites.ScopeCleanup], []string{"scratch-delete"}) {
		t.Errorf("DriverIntervalKeys[scratch] = %v", keys)
	}
	if reg.ForProvisioner(suites.Clusterctl) != reg {
		t.Error("the clusterctl provisioner changed the registry")
	}
}
