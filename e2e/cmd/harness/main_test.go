package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidateReportsEveryProblemAndExits2(t *testing.T) {
	// The shipped local profile with three mistakes, validated against the
	// real stage registry.
	base, err := os.ReadFile("../../../config/local.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	text := strings.Replace(string(base), "    workerMachineCount: 1\n", "    workers: 1\n", 1)
	text = strings.NewReplacer(
		`default/settle-after: ["20s", "2s"]`, `default/settle-after: ["20", "2s"]`,
		"matrix: placement/local.yaml", "matrix: missing.yaml",
		"kubetestConfig: conformance/", "kubetestConfig: "+abs(t, "../../../config/conformance")+"/",
	).Replace(text)
	os.MkdirAll(filepath.Join(dir, "packages"), 0o755)
	os.WriteFile(filepath.Join(dir, "packages", "local.yaml"), []byte("x: 1\n"), 0o644)
	p := filepath.Join(dir, "bad.yaml")
	os.WriteFile(p, []byte(text), 0o644)

	var out, errOut bytes.Buffer
	if code := run([]string{"validate", "-config", p}, &out, &errOut); code != 2 {
		t.Fatalf("exit %d, want 2; stderr:\n%s", code, errOut.String())
	}
	for _, want := range []string{"3 problems", "workers", "default/settle-after", "missing.yaml", "bad.yaml:"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut.String())
		}
	}
}

func TestPlan(t *testing.T) {
	var out, errOut bytes.Buffer
	teardown := "overlap: under cleanup.selfHosted moveBack, cleanup's throw-away kind cluster is made beside the move " +
		"(nothing after it makes anything, so the move-back is cleanup's first deletion); none with SKIP_CLEANUP=1\n"
	if code := run([]string{"plan", "-stages", "move"}, &out, &errOut); code != 0 || out.String() != "stages: bootstrap -> management -> move\n"+
		"overlap: move leaves its last checks running; joined right after it: no stage runs beside it in this selection\n"+teardown {
		t.Fatalf("plan move: %d %q %q", code, out.String(), errOut.String())
	}
	// A plain make e2e plans day one; QUALIFY=1 and a named day-two stage add it.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"plan"}, "-> packages -> conformance\n"},
		{[]string{"plan", "-qualify"}, "-> conformance -> provider-upgrade -> management-upgrade -> scale -> remediate -> upgrade\n"},
		{[]string{"plan", "-focus", "upgrade"}, "stages: bootstrap -> management -> move -> upgrade\n"},
	} {
		out.Reset()
		if code := run(c.args, &out, &errOut); code != 0 || !strings.Contains(out.String(), c.want) {
			t.Errorf("%v: %d %q, want %q", c.args, code, out.String(), c.want)
		}
	}
	out.Reset()
	if code := run([]string{"plan", "-stages", "workload"}, &out, &errOut); code != 0 ||
		!strings.Contains(out.String(), "overlap: move leaves its last checks running; runs beside workload and is joined after it") ||
		strings.Contains(out.String(), teardown) {
		t.Fatalf("plan workload (the workload cluster is deleted before the move-back, beside its kind cluster): %d %q %q", code, out.String(), errOut.String())
	}
	// management-upgrade's tail runs beside every selected stage up to
	// upgrade, after which it is joined, whether upgrade is selected or not.
	for _, c := range []struct{ stages, want string }{
		{"management-upgrade scale remediate upgrade", "overlap: management-upgrade leaves its last checks running; runs beside scale, remediate, upgrade and is joined after upgrade, as management-upgrade's own spec\n"},
		{"management-upgrade scale remediate", "overlap: management-upgrade leaves its last checks running; runs beside scale, remediate and is joined after remediate, as management-upgrade's own spec\n"},
		{"management-upgrade scale", "overlap: management-upgrade leaves its last checks running; runs beside scale and is joined after it, as management-upgrade's own spec\n"},
		{"management-upgrade", "overlap: management-upgrade leaves its last checks running; joined right after it: no stage runs beside it in this selection\n"},
	} {
		out.Reset()
		if code := run([]string{"plan", "-stages", c.stages}, &out, &errOut); code != 0 || !strings.HasSuffix(out.String(), c.want) {
			t.Errorf("plan %s: %d %q, want it to end %q", c.stages, code, out.String(), c.want)
		}
	}
	out.Reset()
	if code := run([]string{"plan", "-stages", "ova"}, &out, &errOut); code != 0 || out.String() != "stages: ova\n" {
		t.Fatalf("plan ova: %q", out.String())
	}
	if code := run([]string{"plan", "-stages", "mgmt"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "unknown stage") {
		t.Fatalf("unknown stage accepted: %d %q", code, errOut.String())
	}
}

func TestSelect(t *testing.T) {
	cases := []struct {
		focus, labels string
		qualify       bool
		want          string
	}{
		{"move", "", false, "--label-filter=(move)\n"},
		{"placement packages", "", false, "--label-filter=(placement || packages)\n"},
		{"ova,move", "!slow", false, "--label-filter=(ova || move) && (!slow)\n"},
		// Day two runs when FOCUS names it or with QUALIFY=1, never by default.
		{"upgrade", "", false, "--label-filter=(upgrade)\n"},
		{"imports.*templates", "", false, "--focus=imports.*templates\n--label-filter=!day-two\n"},
		{"", "fast", false, "--label-filter=!day-two && (fast)\n"},
		{"", "", false, "--label-filter=!day-two\n"},
		{"", "", true, ""},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		args := []string{"select", "-focus", c.focus, "-labels", c.labels}
		if c.qualify {
			args = append(args, "-qualify")
		}
		if code := run(args, &out, &errOut); code != 0 || out.String() != c.want {
			t.Errorf("select %q %q qualify=%v = %d %q, want %q (%s)", c.focus, c.labels, c.qualify, code, out.String(), c.want, errOut.String())
		}
	}
}

// A placement matrix or package list with a mistake fails `validate` (and so
// `make e2e`) at once, not when its stage runs an hour into a vSphere run.
func TestValidateReadsTheMatrixAndThePackageList(t *testing.T) {
	base, err := os.ReadFile("../../../config/local.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ file, key, bad, want string }{
		{"matrix.yaml", "matrix: placement/local.yaml", "name: m\nroles: [management]\ncomponents:\n- name: x\n  nmespace: kube-system\n", "nmespace"},
		{"packages.yaml", "expected: packages/local.yaml", "name: p\nroles:\n  management:\n  - nme: x\n", "nme"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, tc.file), []byte(tc.bad), 0o600); err != nil {
				t.Fatal(err)
			}
			field, _, _ := strings.Cut(tc.key, ":")
			text := strings.Replace(string(base), tc.key, field+": "+filepath.Join(dir, tc.file), 1)
			// The other file stays the shipped one.
			text = strings.NewReplacer("matrix: placement/local.yaml", "matrix: "+abs(t, "../../../config/placement/local.yaml"),
				"expected: packages/local.yaml", "expected: "+abs(t, "../../../config/packages/local.yaml"),
				"kubetestConfig: conformance/", "kubetestConfig: "+abs(t, "../../../config/conformance")+"/").Replace(text)
			p := filepath.Join(dir, "profile.yaml")
			if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			var out, errOut bytes.Buffer
			if code := run([]string{"validate", "-config", p}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), tc.want) {
				t.Fatalf("exit %d, want 2 naming %q; stdout %q stderr:\n%s", code, tc.want, out.String(), errOut.String())
			}
		})
	}
}

func abs(t *testing.T, p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// With driver: tanzu, validate names a missing TANZU_CLI with file:line, and
// plan -v lists the driver's interval keys and specs.
func TestValidateAndPlanWithTheTanzuDriver(t *testing.T) {
	dir := t.TempDir()
	ov := filepath.Join(dir, "tanzu.yaml")
	os.WriteFile(ov, []byte("driver: tanzu\n"), 0o644)
	for k, v := range map[string]string{"CNI_MANIFEST": ov, "KAPP_CONTROLLER_MANIFEST": ov} {
		t.Setenv(k, v)
	}
	t.Setenv("TANZU_CLI", "") // empty is unset for the driver
	var out, errOut bytes.Buffer
	if code := run([]string{"validate", "-config", "../../../config/local.yaml", "-overrides", ov}, &out, &errOut); code != 2 ||
		!strings.Contains(errOut.String(), "tanzu.yaml:1: tanzu.cli") || !strings.Contains(errOut.String(), "TANZU_CLI") {
		t.Errorf("exit %d; stderr:\n%s", code, errOut.String())
	}
	out.Reset()
	errOut.Reset()
	if code := run([]string{"plan", "-v", "-stages", "move", "-config", "../../../config/local.yaml", "-overrides", ov}, &out, &errOut); code != 0 ||
		!strings.Contains(out.String(), "tanzu-create") || !strings.Contains(out.String(), "tanzu management-cluster create") {
		t.Errorf("plan -v with driver: tanzu: exit %d\n%s%s", code, out.String(), errOut.String())
	}
}
