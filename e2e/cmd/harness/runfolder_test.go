package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	runstate "github.com/tkg-e2e/harness/framework/run"
)

func prepare(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(append([]string{"prepare-run"}, args...), &out, &errOut)
	return code, strings.TrimSpace(out.String()), errOut.String()
}

func TestPrepareRunNewFolders(t *testing.T) {
	root := filepath.Join(t.TempDir(), "artifacts") // missing, as on a fresh clone
	code, a, errOut := prepare(t, "-root", root)
	_, b, _ := prepare(t, "-root", root)
	re := regexp.MustCompile(`/artifacts/\d{8}-\d{6}-[a-z][a-z0-9]{4}$`)
	if code != 0 || !re.MatchString(a) || !re.MatchString(b) || a == b {
		t.Fatalf("new folders %q %q (%d %s)", a, b, code, errOut)
	}
	if fi, err := os.Stat(a); err != nil || !fi.IsDir() {
		t.Fatalf("folder not created: %v", err)
	}
}

func TestPrepareRunResume(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "20261122-141501-abcde")
	s, err := runstate.New(dir, filepath.Base(dir), "local", "c")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(root, "latest")); err != nil {
		t.Fatal(err)
	}
	code, got, errOut := prepare(t, "-root", root, "-resume")
	if code != 0 || got != dir || !strings.Contains(errOut, "resuming run 20261122-141501-abcde ("+dir+"), created by ") {
		t.Fatalf("resume via latest: %d %q %q", code, got, errOut)
	}
	// Another user's run.
	p := filepath.Join(dir, runstate.StateFile)
	var raw map[string]any
	b, _ := os.ReadFile(p)
	_ = json.Unmarshal(b, &raw)
	raw["owner"] = map[string]any{"user": "alice", "uid": "424242", "host": "testbed-7"}
	b, _ = json.Marshal(raw)
	_ = os.WriteFile(p, b, 0o644)
	if code, _, errOut := prepare(t, "-root", root, "-resume"); code == 0 || !strings.Contains(errOut, "belongs to alice@testbed-7") {
		t.Fatalf("foreign resume: %d %q", code, errOut)
	}
	if code, got, errOut := prepare(t, "-artifacts", dir, "-resume", "-foreign"); code != 0 || got != dir {
		t.Fatalf("-foreign: %d %q %q", code, got, errOut)
	}
	if code, _, errOut := prepare(t, "-root", t.TempDir(), "-resume"); code == 0 || !strings.Contains(errOut, "ARTIFACTS=") {
		t.Fatalf("resume without a run: %d %q", code, errOut)
	}
}

// make e2e's run-folder logic end to end, with a fake ginkgo (no Docker):
// scripts/test-run-folder.sh.
func TestMakeE2ERunFolder(t *testing.T) {
	if testing.Short() {
		t.Skip("execs make (builds the harness a few times)")
	}
	for _, tool := range []string{"make", "python3", "realpath"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	out, err := exec.Command("bash", "../../../scripts/test-run-folder.sh").CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/test-run-folder.sh: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
