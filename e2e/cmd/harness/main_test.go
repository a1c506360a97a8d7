package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidateReportsEveryProblemAndExits2(t *testing.T) {
	base, err := os.ReadFile("../../../framework/config/testdata/minimal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	text := strings.NewReplacer(
		"    workerMachineCount: 1\n", "    workers: 1\n",
		`default/settle: ["20s", "2s"]`, `default/settle: ["20", "2s"]`,
		"matrix: placement.yaml", "matrix: missing.yaml",
	).Replace(string(base))
	for _, f := range []string{"packages.yaml", "cni.yaml", "kapp.yaml", "clusterctl.yaml"} {
		os.WriteFile(filepath.Join(dir, f), []byte("x: 1\n"), 0o644)
	}
	p := filepath.Join(dir, "bad.yaml")
	os.WriteFile(p, []byte(text), 0o644)

	var out, errOut bytes.Buffer
	if code := run([]string{"validate", "-config", p}, &out, &errOut); code != 2 {
		t.Fatalf("exit %d, want 2; stderr:\n%s", code, errOut.String())
	}
	for _, want := range []string{"3 problems", "workers", "default/settle", "missing.yaml", "bad.yaml:"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut.String())
		}
	}
}

func TestPlan(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"plan", "-stages", "move"}, &out, &errOut); code != 0 || out.String() != "stages: bootstrap -> management -> move\n" {
		t.Fatalf("plan move: %d %q %q", code, out.String(), errOut.String())
	}
	out.Reset()
	if code := run([]string{"plan", "-stages", "ova"}, &out, &errOut); code != 0 || out.String() != "stages: ova\n" {
		t.Fatalf("plan ova: %q", out.String())
	}
	if code := run([]string{"plan", "-stages", "mgmt"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "unknown stage") {
		t.Fatalf("unknown stage accepted: %d %q", code, errOut.String())
	}
}
