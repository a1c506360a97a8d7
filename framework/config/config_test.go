package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tkg-e2e/harness/framework/wait"
)

// fixture writes a minimal valid local profile (plus the files it points at)
// into a temp dir and returns the profile path. mutate edits the YAML text.
func fixture(t *testing.T, mutate func(string) string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"placement.yaml", "packages.yaml", "cni.yaml", "kapp.yaml", "clusterctl.yaml"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x: 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base, err := os.ReadFile("testdata/minimal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(base)
	if mutate != nil {
		text = mutate(text)
	}
	p := filepath.Join(dir, "profile.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// testIntervals is the interval registry testdata/minimal.yaml satisfies; the
// shipped profiles are checked against the real stage registry in
// suites/registry.
var testIntervals = map[string][]string{
	"ova":        {"connect", "import"},
	"bootstrap":  {"create-kind", "wait-controllers"},
	"management": {"apply", "wait-control-plane", "wait-machines", "wait-nodes", "wait-cluster", "wait-controllers", "wait-kapp-controller"},
	"move":       {"pre-check", "move", "settle"},
	"workload":   {"apply", "wait-control-plane", "wait-machines", "wait-nodes", "wait-cluster", "wait-kapp-controller"},
	"placement":  {"wait-pods"},
	"packages":   {"wait-reconcile"},
	"cleanup":    {"wait-delete"},
	"artifacts":  {"collect"},
}

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func load(t *testing.T, path string, vars map[string]string, overrides ...string) (*Config, Problems) {
	t.Helper()
	cfg, err := Load(LoadOptions{Path: path, Overrides: overrides, LookupEnv: env(vars), Intervals: testIntervals})
	if err == nil {
		return cfg, nil
	}
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("want Problems, got %T: %v", err, err)
	}
	return nil, ps
}

// expectProblem asserts one problem mentions all the fragments, and that the
// rendered error carries file:line for it.
func expectProblem(t *testing.T, ps Problems, fragments ...string) Problem {
	t.Helper()
	for _, p := range ps {
		s := p.String()
		ok := true
		for _, f := range fragments {
			if !strings.Contains(s, f) {
				ok = false
				break
			}
		}
		if ok {
			return p
		}
	}
	t.Fatalf("no problem mentions %q; got:\n%s", fragments, ps.Error())
	return Problem{}
}

func replace(old, new string) func(string) string {
	return func(s string) string {
		if !strings.Contains(s, old) {
			panic("fixture does not contain " + old)
		}
		return strings.Replace(s, old, new, 1)
	}
}

func TestMinimalFixtureIsValid(t *testing.T) {
	cfg, ps := load(t, fixture(t, nil), nil)
	if ps != nil {
		t.Fatalf("fixture should be valid:\n%s", ps.Error())
	}
	if cfg.Images[0].LoadBehavior != "mustLoad" || cfg.OVA.Concurrency != 4 || cfg.Clusters.Workload.Namespace != "default" {
		t.Fatalf("defaults not applied: %+v", cfg)
	}
	if !filepath.IsAbs(cfg.Placement.Matrix) {
		t.Fatalf("relative path not resolved against the config file: %s", cfg.Placement.Matrix)
	}
	iv, err := cfg.Interval("management", "wait-nodes")
	if err != nil || iv.Timeout.String() != "10m0s" || iv.Poll.String() != "3s" {
		t.Fatalf("Interval(management, wait-nodes) = %v, %v", iv, err)
	}
	if iv := cfg.MustInterval("move", "settle"); iv.Timeout.String() != "5s" {
		t.Fatalf("stage-specific interval should win over default: %v", iv)
	}
}

func TestUnknownKeyNamesFileLineAndSuggestion(t *testing.T) {
	p := fixture(t, replace("    workerMachineCount: 1\n", "    workerCount: 1\n"))
	_, ps := load(t, p, nil)
	pr := expectProblem(t, ps, "clusters.management.workerCount", "unknown key", `did you mean "workerMachineCount"`)
	if pr.Line == 0 || pr.File != p {
		t.Fatalf("problem lacks file/line: %+v", pr)
	}
}

func TestMissingVariable(t *testing.T) {
	p := fixture(t, replace("nodeImage: kindest/node:v1.33.1", "nodeImage: ${MY_NODE_IMAGE}"))
	_, ps := load(t, p, nil)
	expectProblem(t, ps, "clusters.bootstrap.nodeImage", "variable MY_NODE_IMAGE is not set", "export MY_NODE_IMAGE")
	// Set in the environment, it is used.
	cfg, ps := load(t, p, map[string]string{"MY_NODE_IMAGE": "kindest/node:v1.33.1"})
	if ps != nil || cfg.Clusters.Bootstrap.NodeImage != "kindest/node:v1.33.1" {
		t.Fatalf("env not used: %v", ps)
	}
}

func TestDefaultTakesOverAnEmptyVariableAsInTheShell(t *testing.T) {
	p := fixture(t, replace("nodeImage: kindest/node:v1.33.1", "nodeImage: ${MY_NODE_IMAGE:-kindest/node:v1.33.1}"))
	for _, vars := range []map[string]string{nil, {"MY_NODE_IMAGE": ""}} {
		cfg, ps := load(t, p, vars)
		if ps != nil || cfg.Clusters.Bootstrap.NodeImage != "kindest/node:v1.33.1" {
			t.Fatalf("with %v: want the default, got %v %+v", vars, ps, cfg)
		}
	}
	cfg, ps := load(t, p, map[string]string{"MY_NODE_IMAGE": "kindest/node:v1.34.0"})
	if ps != nil || cfg.Clusters.Bootstrap.NodeImage != "kindest/node:v1.34.0" {
		t.Fatalf("a set value must win over the default: %v", ps)
	}
	// Without a default an empty value stays empty (it is set).
	if got, missing := expand("a${X}b", env(map[string]string{"X": ""})); got != "ab" || len(missing) > 0 {
		t.Fatalf("expand = %q, missing %v", got, missing)
	}
}

func TestVariablesSectionAndEnvironmentPrecedence(t *testing.T) {
	p := fixture(t, replace("variables:\n", "variables:\n  NODE_TAG: v1.33.1\n"))
	p = rewrite(t, p, replace("nodeImage: kindest/node:v1.33.1", "nodeImage: kindest/node:${NODE_TAG}"))
	cfg, ps := load(t, p, nil)
	if ps != nil || cfg.Clusters.Bootstrap.NodeImage != "kindest/node:v1.33.1" {
		t.Fatalf("variables section not used: %v %v", ps, cfg)
	}
	cfg, _ = load(t, p, map[string]string{"NODE_TAG": "v1.34.0"})
	if cfg.Clusters.Bootstrap.NodeImage != "kindest/node:v1.34.0" || cfg.Variables["NODE_TAG"] != "v1.34.0" {
		t.Fatalf("environment must win over variables: %s %s", cfg.Clusters.Bootstrap.NodeImage, cfg.Variables["NODE_TAG"])
	}
}

func TestMalformedDurations(t *testing.T) {
	p := fixture(t, func(s string) string {
		s = replace(`default/wait-nodes: ["10m", "3s"]`, `default/wait-nodes: ["10 minutes", "3s"]`)(s)
		return replace("timeout: 75m", "timeout: soon")(s)
	})
	_, ps := load(t, p, nil)
	expectProblem(t, ps, "intervals[default/wait-nodes]", `"10 minutes" is not a duration`)
	expectProblem(t, ps, "timeout", `"soon" is not a positive duration`)
}

func TestIntervalKeyTyposAndMissingKeys(t *testing.T) {
	p := fixture(t, replace(`default/wait-nodes: ["10m", "3s"]`, `managment/wait-nodes: ["10m", "3s"]`+"\n  default/wait-node: [\"1m\"]"))
	_, ps := load(t, p, nil)
	expectProblem(t, ps, `unknown scope "managment"`)
	expectProblem(t, ps, `unknown interval key "wait-node"`, `did you mean "wait-nodes"`)
	expectProblem(t, ps, "no interval for:", "management/wait-nodes")
}

func TestFilesThatDoNotExist(t *testing.T) {
	p := fixture(t, replace("matrix: placement.yaml", "matrix: nowhere/placement.yaml"))
	_, ps := load(t, p, nil)
	expectProblem(t, ps, "placement.matrix", "nowhere/placement.yaml", "no such file")
}

func TestUnreadableOVA(t *testing.T) {
	p := fixture(t, replace("      generate: {diskMiB: 1}\n", ""))
	_, ps := load(t, p, nil)
	expectProblem(t, ps, "ova.images[0].source", "cannot read the OVA", "no such file")
}

func TestMissingConfigFileAndOverride(t *testing.T) {
	_, ps := load(t, filepath.Join(t.TempDir(), "nope.yaml"), nil)
	expectProblem(t, ps, "cannot read config file", "CONFIG=")
	_, ps = load(t, fixture(t, nil), nil, "/nonexistent/overrides.yaml")
	expectProblem(t, ps, "cannot read override file", "CONFIG_OVERRIDES")
}

func TestYAMLSyntaxErrorHasLine(t *testing.T) {
	p := fixture(t, replace("profile: local\n", "profile: local\n  bad: [\n"))
	_, ps := load(t, p, nil)
	pr := expectProblem(t, ps, "not valid YAML")
	if pr.Line == 0 {
		t.Fatalf("no line: %+v", pr)
	}
}

func TestWrongTypes(t *testing.T) {
	p := fixture(t, func(s string) string {
		s = replace("    controlPlaneMachineCount: 1\n", "    controlPlaneMachineCount: one\n")(s)
		return replace("simulator: true", "simulator: maybe")(s)
	})
	_, ps := load(t, p, nil)
	expectProblem(t, ps, "clusters.management.controlPlaneMachineCount", `"one" is not a whole number`)
	expectProblem(t, ps, "vsphere.simulator", `"maybe" is not true or false`)
}

func TestThreeMistakesReportedTogether(t *testing.T) {
	p := fixture(t, func(s string) string {
		s = replace("    workerMachineCount: 1\n", "    workers: 1\n")(s)
		s = replace(`default/settle: ["20s", "2s"]`, `default/settle: ["20", "2s"]`)(s)
		return replace("matrix: placement.yaml", "matrix: missing.yaml")(s)
	})
	_, ps := load(t, p, nil)
	if len(ps) != 3 {
		t.Fatalf("want exactly 3 problems, got %d:\n%s", len(ps), ps.Error())
	}
	msg := ps.Error()
	for _, want := range []string{"3 problems", "workers", "default/settle", "missing.yaml"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error does not mention %q:\n%s", want, msg)
		}
	}
}

func TestLiteralPasswordRejectedAndSecretNeverPrinted(t *testing.T) {
	p := fixture(t, replace("  simulator: true\n", "  simulator: true\n  password: hunter2hunter2\n"))
	_, ps := load(t, p, nil)
	pr := expectProblem(t, ps, "vsphere.password", "literal secret is not allowed")
	if strings.Contains(ps.Error(), "hunter2") || strings.Contains(fmt.Sprint(pr), "hunter2") {
		t.Fatalf("the problem report leaks the password:\n%s", ps.Error())
	}

	p = fixture(t, replace("  simulator: true\n", "  simulator: true\n  password: ${VSPHERE_PASSWORD}\n"))
	cfg, ps := load(t, p, map[string]string{"VSPHERE_PASSWORD": "hunter2hunter2"})
	if ps != nil {
		t.Fatal(ps.Error())
	}
	if cfg.VSphere.Password.Reveal() != "hunter2hunter2" {
		t.Fatal("password not loaded")
	}
	js, _ := json.Marshal(cfg)
	dump := fmt.Sprintf("%v %+v %#v %s", cfg, cfg.VSphere, cfg.VSphere.Password, js)
	if strings.Contains(dump, "hunter2") {
		t.Fatalf("a config dump leaks the password")
	}
	if len(cfg.Secrets()) != 1 || cfg.Secrets()[0] != "hunter2hunter2" {
		t.Fatalf("Secrets() = %v", cfg.Secrets())
	}
}

func TestPasswordFile(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("from-a-file\n"), 0o600)
	p := fixture(t, replace("  simulator: true\n", "  simulator: true\n  passwordFile: "+pw+"\n"))
	cfg, ps := load(t, p, nil)
	if ps != nil || cfg.VSphere.Password.Reveal() != "from-a-file" {
		t.Fatalf("password file not read: %v", ps)
	}
	os.WriteFile(pw, nil, 0o600)
	_, ps = load(t, p, nil)
	expectProblem(t, ps, "vsphere.passwordFile", "empty")
}

func TestVSphereProfileRequiresSiteVariables(t *testing.T) {
	p := fixture(t, func(s string) string {
		s = replace("profile: local", "profile: vsphere")(s)
		return replace("  simulator: true\n", "  simulator: false\n  server: ${VSPHERE_SERVER}\n  password: ${VSPHERE_PASSWORD}\n")(s)
	})
	_, ps := load(t, p, nil)
	expectProblem(t, ps, "vsphere.server", "VSPHERE_SERVER is not set")
	expectProblem(t, ps, "vsphere.password", "VSPHERE_PASSWORD is not set")
	expectProblem(t, ps, "vsphere.username", "VSPHERE_USERNAME")
}

func TestOverridesMergeKeyByKey(t *testing.T) {
	p := fixture(t, nil)
	ov := filepath.Join(t.TempDir(), "ov.yaml")
	os.WriteFile(ov, []byte("clusters:\n  workload:\n    workerMachineCount: 3\nova:\n  replace: true\n"), 0o644)
	cfg, ps := load(t, p, nil, ov)
	if ps != nil {
		t.Fatal(ps.Error())
	}
	if cfg.Clusters.Workload.WorkerMachineCount != 3 || cfg.Clusters.Workload.Name != "wl" || !cfg.OVA.Replace {
		t.Fatalf("merge wrong: %+v %+v", cfg.Clusters.Workload, cfg.OVA)
	}
	os.WriteFile(ov, []byte("clusters:\n  workload:\n    size: 3\n"), 0o644)
	_, ps = load(t, p, nil, ov)
	pr := expectProblem(t, ps, "clusters.workload.size", "unknown key")
	if pr.File != ov {
		t.Fatalf("problem should point at the override file, got %s", pr.File)
	}
}

func rewrite(t *testing.T, path string, mutate func(string) string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(mutate(string(b))), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestVSphereServerWithoutHostIsNamed(t *testing.T) {
	p := fixture(t, func(s string) string {
		s = replace("profile: local", "profile: vsphere")(s)
		return replace("  simulator: true\n", "  simulator: false\n  server: ${VSPHERE_SERVER}\n  password: pw\n")(s)
	})
	for _, bad := range []string{":8989", "https://:8989/sdk"} {
		_, ps := load(t, p, map[string]string{"VSPHERE_SERVER": bad})
		expectProblem(t, ps, "vsphere.server", "has no host")
	}
	for _, good := range []string{"vc.example.com", "10.0.0.5:8989", "https://vc.example.com/sdk", "172.18.0.1"} {
		_, ps := load(t, p, map[string]string{"VSPHERE_SERVER": good})
		for _, pr := range ps {
			if pr.Key == "vsphere.server" {
				t.Errorf("VSPHERE_SERVER=%s: unexpected problem %v", good, pr)
			}
		}
	}
}

// Every wait of a stage gets the stuck grace: the stage's own, else the
// default, else wait.DefaultGrace; a scope may set it though no stage
// registers the key, and a bad one is reported like any interval.
func TestStuckGraceFillsEveryIntervalOfItsStage(t *testing.T) {
	p := fixture(t, replace(`default/wait-nodes: ["10m", "3s"]`, `default/wait-nodes: ["10m", "3s"]`+"\n  management/stuck-grace: [\"12s\"]"))
	cfg, ps := load(t, p, nil)
	if ps != nil {
		t.Fatal(ps)
	}
	if iv, _ := cfg.Interval("management", "wait-nodes"); iv.Grace != 12*time.Second {
		t.Errorf("management's grace %s, want its own 12s", iv.Grace)
	}
	if iv, _ := cfg.Interval("workload", "wait-nodes"); iv.Grace != wait.DefaultGrace {
		t.Errorf("workload's grace %s, want the default %s", iv.Grace, wait.DefaultGrace)
	}
	p = fixture(t, replace(`default/wait-nodes: ["10m", "3s"]`, `default/wait-nodes: ["10m", "3s"]`+"\n  default/stuck-grace: [\"soon\"]"))
	_, ps = load(t, p, nil)
	expectProblem(t, ps, "intervals[default/stuck-grace]", `"soon" is not a duration`)
}

// A negative node deletion timeout is named with its line and what to write
// instead; 0 (retry until the Node is gone) is valid.
func TestNodeDeletionTimeoutIsNotNegative(t *testing.T) {
	p := fixture(t, replace("    nodeImage: kindest/node:v1.33.1\n", "    nodeImage: kindest/node:v1.33.1\n  nodeDeletionTimeoutSeconds: -5\n"))
	_, ps := load(t, p, nil)
	pr := expectProblem(t, ps, "clusters.nodeDeletionTimeoutSeconds", "-5 is negative", "use 0")
	if pr.Line == 0 {
		t.Fatalf("problem lacks its line: %+v", pr)
	}
	p = fixture(t, replace("    nodeImage: kindest/node:v1.33.1\n", "    nodeImage: kindest/node:v1.33.1\n  nodeDeletionTimeoutSeconds: 0\n"))
	cfg, ps := load(t, p, nil)
	if ps != nil || cfg.Clusters.NodeDeletionTimeoutSeconds == nil || *cfg.Clusters.NodeDeletionTimeoutSeconds != 0 {
		t.Fatalf("0 should be valid and kept: %v %+v", ps, cfg)
	}
}
