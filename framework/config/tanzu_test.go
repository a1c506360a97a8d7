package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tanzuIntervals are the driver intervals of the tests' registry, shaped
// like the lifecycle suite's.
var tanzuIntervals = map[string]map[string][]string{
	DriverTanzu: {"management": {"tanzu-create"}, "workload": {"tanzu-create"}, "cleanup": {"tanzu-delete"}},
}

func loadDriver(t *testing.T, path string, vars map[string]string) (*Config, Problems) {
	t.Helper()
	cfg, err := Load(LoadOptions{Path: path, LookupEnv: env(vars), Intervals: testIntervals, DriverIntervals: tanzuIntervals})
	if err == nil {
		return cfg, nil
	}
	ps, ok := err.(Problems)
	if !ok {
		t.Fatalf("want Problems, got %T: %v", err, err)
	}
	return nil, ps
}

// fakeCLI writes an executable (or, with mode 0o644, a plain file) to stand
// for the tanzu binary.
func fakeCLI(t *testing.T, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tanzu")
	if err := os.WriteFile(p, []byte("#!/bin/sh\nexit 0\n"), mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// withTanzu sets driver: tanzu, a tanzu section and the driver's intervals.
func withTanzu(section string) func(string) string {
	return func(s string) string {
		s = strings.Replace(s, "profile: local\n", "profile: local\ndriver: tanzu\n", 1)
		s = strings.Replace(s, "intervals:\n", "intervals:\n  default/tanzu-create: [\"40m\", \"10s\"]\n  default/tanzu-delete: [\"20m\", \"10s\"]\n", 1)
		if section != "" {
			s += "tanzu:\n" + section
		}
		return s
	}
}

func TestDriverDefaultsToClusterctlAndIgnoresTheTanzuSection(t *testing.T) {
	// No driver key, a tanzu section whose CLI does not exist, and none of
	// the tanzu driver's intervals: nothing of it is checked.
	p := fixture(t, func(s string) string { return s + "tanzu:\n  cli: /nonexistent/tanzu\n  verbosity: 42\n" })
	cfg, ps := loadDriver(t, p, nil)
	if ps != nil {
		t.Fatalf("clusterctl profile with an unused tanzu section should load:\n%s", ps.Error())
	}
	if cfg.Driver != DriverClusterctl || cfg.UsesTanzu() {
		t.Errorf("driver = %q, want the default %q", cfg.Driver, DriverClusterctl)
	}
}

func TestUnknownDriverNamesFileLineAndFix(t *testing.T) {
	p := fixture(t, replace("profile: local\n", "profile: local\ndriver: tkgctl\n"))
	_, ps := loadDriver(t, p, nil)
	pr := expectProblem(t, ps, "driver", `unknown driver "tkgctl"`, "use clusterctl", "or tanzu")
	if pr.Line != 2 || !strings.HasSuffix(pr.File, "profile.yaml") {
		t.Errorf("problem at %s:%d, want profile.yaml:2", pr.File, pr.Line)
	}
}

func TestTanzuDriverDefaultsAndCLIFromTANZU_CLI(t *testing.T) {
	cli := fakeCLI(t, 0o755)
	// An empty tanzu.cli reads TANZU_CLI; verbosity and killGrace default.
	cfg, ps := loadDriver(t, fixture(t, withTanzu("")), map[string]string{"TANZU_CLI": cli})
	if ps != nil {
		t.Fatalf("unexpected problems:\n%s", ps.Error())
	}
	if !cfg.UsesTanzu() || cfg.Tanzu.CLI != cli || cfg.Tanzu.Verbosity != 9 || cfg.Tanzu.KillGraceDuration().String() != "30s" {
		t.Errorf("tanzu = %+v, want CLI %s, verbosity 9, killGrace 30s", cfg.Tanzu, cli)
	}
	// ${TANZU_CLI} works through the usual expansion; configValues are kept.
	cfg, ps = loadDriver(t, fixture(t, withTanzu("  cli: ${TANZU_CLI}\n  verbosity: 6\n  configValues:\n    CLUSTER_PLAN: prod\n")),
		map[string]string{"TANZU_CLI": cli})
	if ps != nil {
		t.Fatalf("unexpected problems:\n%s", ps.Error())
	}
	if cfg.Tanzu.CLI != cli || cfg.Tanzu.Verbosity != 6 || cfg.Tanzu.ConfigValues["CLUSTER_PLAN"] != "prod" {
		t.Errorf("tanzu = %+v", cfg.Tanzu)
	}
	if iv := cfg.MustInterval("management", "tanzu-create"); iv.Timeout.String() != "40m0s" {
		t.Errorf("management/tanzu-create = %v", iv)
	}
}

func TestTanzuCLIRelativeToTheProfile(t *testing.T) {
	p := fixture(t, withTanzu("  cli: bin/tanzu\n"))
	if err := os.MkdirAll(filepath.Join(filepath.Dir(p), "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(p), "bin", "tanzu"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, ps := loadDriver(t, p, nil)
	if ps != nil {
		t.Fatalf("unexpected problems:\n%s", ps.Error())
	}
	if want := filepath.Join(filepath.Dir(p), "bin", "tanzu"); cfg.Tanzu.CLI != want {
		t.Errorf("cli = %s, want %s", cfg.Tanzu.CLI, want)
	}
}

func TestTanzuCLIProblemsNameTANZU_CLI(t *testing.T) {
	cases := map[string]struct {
		section string
		vars    map[string]string
		want    string
	}{
		"unset":          {"", nil, "neither tanzu.cli nor TANZU_CLI is set"},
		"missing":        {"  cli: /nonexistent/tanzu\n", nil, "no such file or directory"},
		"not executable": {"  cli: ${TANZU_CLI}\n", map[string]string{"TANZU_CLI": fakeCLI(t, 0o644)}, "is not executable"},
		"a directory":    {"  cli: ${TANZU_CLI}\n", map[string]string{"TANZU_CLI": t.TempDir()}, "is a directory"},
		"not in PATH":    {"  cli: tanzu-not-installed-here\n", nil, "is not in PATH"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, ps := loadDriver(t, fixture(t, withTanzu(tc.section)), tc.vars)
			pr := expectProblem(t, ps, "tanzu.cli", tc.want, "export TANZU_CLI=")
			if pr.Line == 0 {
				t.Errorf("no line: %s", pr)
			}
		})
	}
}

func TestTanzuUnsetVariableIsReportedOnce(t *testing.T) {
	_, ps := loadDriver(t, fixture(t, withTanzu("  cli: ${TANZU_CLI}\n")), nil)
	expectProblem(t, ps, "tanzu.cli", "TANZU_CLI is not set")
	n := 0
	for _, p := range ps {
		if p.Key == "tanzu.cli" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("tanzu.cli reported %d times, want once:\n%s", n, ps.Error())
	}
}

func TestTanzuSectionProblems(t *testing.T) {
	section := "  cli: ${TANZU_CLI}\n  verbosity: 12\n  killGrace: soon\n  configValues:\n" +
		"    cluster_plan: dev\n    CLUSTER_NAME: mine\n    AVI_PASSWORD: ${AVI_PASSWORD}\n    CLUSTER_PLAN: dev\n"
	_, ps := loadDriver(t, fixture(t, withTanzu(section)), map[string]string{"TANZU_CLI": fakeCLI(t, 0o755), "AVI_PASSWORD": "long-enough-secret"})
	expectProblem(t, ps, "tanzu.verbosity", "12 is not a tanzu -v level")
	expectProblem(t, ps, "tanzu.killGrace", `"soon" is not a positive duration`)
	expectProblem(t, ps, "tanzu.configValues[cluster_plan]", "not a TKG configuration variable name")
	expectProblem(t, ps, "tanzu.configValues[CLUSTER_NAME]", "derived from the profile")
	expectProblem(t, ps, "tanzu.configValues[AVI_PASSWORD]", "holds a secret")
	for _, p := range ps {
		if p.Key == "tanzu.configValues[CLUSTER_PLAN]" {
			t.Errorf("a valid configValues key was reported: %s", p)
		}
		if strings.Contains(p.String(), "long-enough-secret") {
			t.Errorf("a problem quotes the secret: %s", p)
		}
	}
}

func TestTanzuDriverIntervalsRequiredOnlyWithTanzu(t *testing.T) {
	cli := fakeCLI(t, 0o755)
	noIntervals := func(s string) string {
		s = withTanzu("")(s)
		s = strings.Replace(s, "  default/tanzu-create: [\"40m\", \"10s\"]\n", "", 1)
		return strings.Replace(s, "  default/tanzu-delete: [\"20m\", \"10s\"]\n", "  management/tanzu-create: [\"40m\", \"10s\"]\n", 1)
	}
	_, ps := loadDriver(t, fixture(t, noIntervals), map[string]string{"TANZU_CLI": cli})
	pr := expectProblem(t, ps, "intervals", "driver: tanzu reads intervals the profile does not set", "cleanup/tanzu-delete", "workload/tanzu-create")
	if strings.Contains(pr.Message, "management/tanzu-create") {
		t.Errorf("management/tanzu-create is set but reported missing: %s", pr)
	}
	// The same keys in a clusterctl profile are known (no "unknown key"),
	// and their absence is no problem.
	withKeys := fixture(t, replace("intervals:\n", "intervals:\n  workload/tanzu-create: [\"40m\", \"10s\"]\n"))
	if _, ps := loadDriver(t, withKeys, nil); ps != nil {
		t.Fatalf("a clusterctl profile carrying the tanzu driver's intervals should load:\n%s", ps.Error())
	}
	// A driver key under a scope no driver reads it in is still rejected.
	wrongScope := fixture(t, replace("intervals:\n", "intervals:\n  placement/tanzu-create: [\"40m\", \"10s\"]\n"))
	_, ps = loadDriver(t, wrongScope, nil)
	expectProblem(t, ps, "intervals[placement/tanzu-create]", `stage placement does not use "tanzu-create"`)
}

func TestPeekDriver(t *testing.T) {
	p := fixture(t, nil)
	if d := PeekDriver(p, nil); d != DriverClusterctl {
		t.Errorf("no driver key: %q, want clusterctl", d)
	}
	ov := filepath.Join(t.TempDir(), "ov.yaml")
	if err := os.WriteFile(ov, []byte("driver: tanzu\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d := PeekDriver(p, []string{ov}); d != DriverTanzu {
		t.Errorf("overrides set tanzu: got %q", d)
	}
	// One read gives both keys; a malformed driver does not hide the profile.
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("profile: vsphere\ndriver: [tanzu]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := Peek(p, []string{ov, bad}); got.Profile != "vsphere" || got.Driver != DriverTanzu {
		t.Errorf("Peek = %+v, want profile vsphere (from bad.yaml) and driver tanzu (from ov.yaml)", got)
	}
}
