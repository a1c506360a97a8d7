package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// withCleanup appends a cleanup section to the fixture.
func withCleanup(section string) func(string) string {
	return func(s string) string { return s + "cleanup:\n" + section }
}

// withProvidersAndCleanup is withCleanup with the fixture's infrastructure
// providers replaced by providers (a flow list, "[vsphere]").
func withProvidersAndCleanup(providers, section string) func(string) string {
	return func(s string) string {
		return withCleanup(section)(replace("infrastructureProviders: [docker]", "infrastructureProviders: "+providers)(s))
	}
}

func TestCleanupSelfHostedUnsetIsMoveBack(t *testing.T) {
	cfg, ps := load(t, fixture(t, nil), nil)
	if ps != nil {
		t.Fatal(ps.Error())
	}
	if cfg.Cleanup.SelfHosted != SelfHostedMoveBack || cfg.RemovesSelfHostedContainers() {
		t.Errorf("cleanup.selfHosted unset = %q, want %q", cfg.Cleanup.SelfHosted, SelfHostedMoveBack)
	}
	// An empty section is unset too.
	cfg, ps = load(t, fixture(t, withCleanup("  selfHosted: \"\"\n")), nil)
	if ps != nil || cfg.Cleanup.SelfHosted != SelfHostedMoveBack {
		t.Errorf("cleanup.selfHosted empty = %+v, %v; want moveBack", cfg, ps)
	}
}

func TestCleanupSelfHostedUnknownValueNamesTheAllowedOnes(t *testing.T) {
	p := fixture(t, withCleanup("  selfHosted: removeContainer\n"))
	_, ps := load(t, p, nil)
	pr := expectProblem(t, ps, "cleanup.selfHosted", `unknown value "removeContainer"`, "use moveBack", "or removeContainers")
	if pr.Line == 0 || pr.File != p {
		t.Errorf("problem at %s:%d, want a line of %s", pr.File, pr.Line, p)
	}
}

func TestCleanupRemoveContainersRejectedWithVSphere(t *testing.T) {
	for _, providers := range []string{"[vsphere]", "[docker, vsphere:v1.13.0]"} {
		t.Run(providers, func(t *testing.T) {
			p := fixture(t, withProvidersAndCleanup(providers, "  selfHosted: removeContainers\n"))
			_, ps := load(t, p, nil)
			pr := expectProblem(t, ps, "cleanup.selfHosted", "only CAPD (infrastructure provider docker)", "infrastructureProviders lists vsphere,",
				"leave running", "fix: set cleanup.selfHosted: moveBack")
			if pr.Line == 0 || pr.File != p {
				t.Errorf("problem at %s:%d, want a line of %s", pr.File, pr.Line, p)
			}
			if strings.Contains(pr.Message, "docker,") {
				t.Errorf("docker is named as a provider removeContainers cannot handle: %s", pr)
			}
		})
	}
	// moveBack is valid with every provider.
	p := fixture(t, withProvidersAndCleanup("[vsphere]", "  selfHosted: moveBack\n"))
	_, ps := load(t, p, nil)
	for _, pr := range ps {
		if pr.Key == "cleanup.selfHosted" {
			t.Errorf("moveBack with vsphere was rejected: %s", pr)
		}
	}
}

func TestCleanupRemoveContainersAcceptedWithDockerOnly(t *testing.T) {
	for _, providers := range []string{"[docker]", "[docker:v1.14.0]"} {
		p := fixture(t, withProvidersAndCleanup(providers, "  selfHosted: removeContainers\n"))
		cfg, ps := load(t, p, nil)
		if ps != nil {
			t.Fatalf("%s: removeContainers with docker should load:\n%s", providers, ps.Error())
		}
		if !cfg.RemovesSelfHostedContainers() {
			t.Errorf("%s: cleanup.selfHosted = %q", providers, cfg.Cleanup.SelfHosted)
		}
	}
}

// The shipped local profile's form: ${CLEANUP_SELF_HOSTED:-removeContainers},
// and an overrides file (CI's cleanup-moveback) wins over the profile.
func TestCleanupSelfHostedFromTheEnvironmentAndOverrides(t *testing.T) {
	p := fixture(t, withCleanup("  selfHosted: ${CLEANUP_SELF_HOSTED:-removeContainers}\n"))
	cfg, ps := load(t, p, nil)
	if ps != nil || cfg.Cleanup.SelfHosted != SelfHostedRemoveContainers {
		t.Fatalf("default of the variable: %+v %v", cfg, ps)
	}
	cfg, ps = load(t, p, map[string]string{"CLEANUP_SELF_HOSTED": "moveBack"})
	if ps != nil || cfg.Cleanup.SelfHosted != SelfHostedMoveBack {
		t.Fatalf("CLEANUP_SELF_HOSTED=moveBack: %+v %v", cfg, ps)
	}
	ov := filepath.Join(t.TempDir(), "cleanup-moveback.overrides.yaml")
	if err := os.WriteFile(ov, []byte("cleanup:\n  selfHosted: moveBack\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, ps = load(t, p, nil, ov)
	if ps != nil || cfg.Cleanup.SelfHosted != SelfHostedMoveBack {
		t.Fatalf("overrides file: %+v %v", cfg, ps)
	}
	// The profile's removeContainers with a provider an overrides file
	// adds is reported at the profile's line, with the other problems of
	// the load.
	if err := os.WriteFile(ov, []byte("clusterctl:\n  infrastructureProviders: [vsphere]\nartifacts:\n  maxFileSize: lots\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, ps = load(t, p, nil, ov)
	pr := expectProblem(t, ps, "cleanup.selfHosted", "infrastructureProviders lists vsphere")
	if pr.File != p || pr.Line == 0 {
		t.Errorf("problem at %s:%d, want a line of %s", pr.File, pr.Line, p)
	}
	expectProblem(t, ps, "artifacts.maxFileSize", `"lots" is not a size`)
}

// cleanup.managed: delete unless set; removeContainers only with docker;
// an unknown value names the allowed ones.
func TestCleanupManaged(t *testing.T) {
	cfg, ps := load(t, fixture(t, nil), nil)
	if ps != nil || cfg.Cleanup.Managed != ManagedDelete || cfg.RemovesManagedContainers() {
		t.Fatalf("cleanup.managed unset = %q (%v), want %q", cfg.Cleanup.Managed, ps, ManagedDelete)
	}
	cfg, ps = load(t, fixture(t, withCleanup("  managed: removeContainers\n")), nil)
	if ps != nil || !cfg.RemovesManagedContainers() {
		t.Fatalf("removeContainers with docker: %v", ps)
	}
	p := fixture(t, withCleanup("  managed: remove\n"))
	_, ps = load(t, p, nil)
	if pr := expectProblem(t, ps, "cleanup.managed", `unknown value "remove"`, "use delete", "or removeContainers"); pr.Line == 0 || pr.File != p {
		t.Errorf("problem at %s:%d, want a line of %s", pr.File, pr.Line, p)
	}
	p = fixture(t, withProvidersAndCleanup("[vsphere]", "  managed: removeContainers\n"))
	_, ps = load(t, p, nil)
	expectProblem(t, ps, "cleanup.managed", "only CAPD (infrastructure provider docker)", "infrastructureProviders lists vsphere,",
		"fix: set cleanup.managed: delete")
}

// cleanup.stageSelfHosted follows cleanup.selfHosted unless set; set, it
// wins (CI: the run's own management cluster moved back, the stage's removed);
// removeContainers only with docker; an unknown value names the allowed ones.
func TestCleanupStageSelfHosted(t *testing.T) {
	for _, c := range []struct {
		section    string
		own, stage bool
	}{
		{"", false, false},
		{"  selfHosted: removeContainers\n", true, true},
		{"  selfHosted: moveBack\n  stageSelfHosted: removeContainers\n", false, true},
		{"  selfHosted: removeContainers\n  stageSelfHosted: moveBack\n", true, false},
	} {
		cfg, ps := load(t, fixture(t, withCleanup(c.section)), nil)
		if ps != nil {
			t.Fatalf("%q: %s", c.section, ps.Error())
		}
		if cfg.RemovesSelfHostedContainers() != c.own || cfg.RemovesStageSelfHostedContainers() != c.stage {
			t.Errorf("%q: removes own %v, stage's %v; want %v, %v", c.section,
				cfg.RemovesSelfHostedContainers(), cfg.RemovesStageSelfHostedContainers(), c.own, c.stage)
		}
	}
	p := fixture(t, withCleanup("  stageSelfHosted: remove\n"))
	_, ps := load(t, p, nil)
	if pr := expectProblem(t, ps, "cleanup.stageSelfHosted", `unknown value "remove"`, "leave it unset", "moveBack", "removeContainers"); pr.Line == 0 || pr.File != p {
		t.Errorf("problem at %s:%d, want a line of %s", pr.File, pr.Line, p)
	}
	p = fixture(t, withProvidersAndCleanup("[vsphere]", "  stageSelfHosted: removeContainers\n"))
	_, ps = load(t, p, nil)
	expectProblem(t, ps, "cleanup.stageSelfHosted", "only CAPD (infrastructure provider docker)", "infrastructureProviders lists vsphere,",
		"fix: set cleanup.stageSelfHosted: moveBack")
	for _, pr := range ps {
		if pr.Key == "cleanup.selfHosted" {
			t.Errorf("cleanup.selfHosted (unset: moveBack) reported: %s", pr)
		}
	}
}
