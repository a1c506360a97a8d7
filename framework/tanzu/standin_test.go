package tanzu

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tkg-e2e/harness/framework/redact"
)

// standinBin is the stand-in CLI, built once by TestMain.
var standinBin string

func TestMain(m *testing.M) {
	os.Exit(func() int {
		dir, err := os.MkdirTemp("", "tanzu-standin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		standinBin = filepath.Join(dir, "tanzu")
		gobin := filepath.Join(os.Getenv("GOROOT"), "bin", "go")
		if _, err := os.Stat(gobin); err != nil {
			gobin = "go"
		}
		out, err := exec.Command(gobin, "build", "-o", standinBin, "./standin").CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "building the stand-in tanzu CLI: %v\n%s", err, out)
			return 1
		}
		return m.Run()
	}())
}

// testPassword is what the tests put in VSPHERE_PASSWORD: characters that
// have escaped forms (so a form-only redaction would show), and long enough
// to be found by substring search.
const testPassword = `Sup3r&S3cret"pw!`

// fixture is one test's run-local world: HOME for the stand-in's
// kubeconfigs, the kubeconfig it hands out, a work folder for the config
// file and an artifacts folder for transcripts.
type fixture struct {
	t          *testing.T
	home       string
	work       string
	artifacts  string
	kubeconfig string
	kcData     string
	pidfile    string
	red        *redact.Redactor
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	root := t.TempDir()
	f := &fixture{t: t, home: filepath.Join(root, "home"), work: filepath.Join(root, "work"),
		artifacts: filepath.Join(root, "artifacts"), kubeconfig: filepath.Join(root, "kind.kubeconfig"),
		pidfile: filepath.Join(root, "child.pid"), red: redact.New()}
	// Not a usable kubeconfig: the tests only check that the stand-in
	// hands out exactly these bytes where it says.
	f.kcData = "apiVersion: v1\nkind: Config\nclusters:\n- name: kind-" + filepath.Base(root) + "\n"
	for _, d := range []string{f.home, f.work, f.artifacts} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(f.kubeconfig, []byte(f.kcData), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) config(name string) *ConfigFile {
	f.t.Helper()
	cf, err := WriteConfigFile(ConfigFileInput{Dir: f.work, ArtifactsDir: f.artifacts, Redactor: f.red, Values: map[string]string{
		"CLUSTER_NAME": name, "CLUSTER_PLAN": "dev", "INFRASTRUCTURE_PROVIDER": "vsphere",
		"VSPHERE_SERVER": "vcsim.example.test", "VSPHERE_USERNAME": "administrator@vsphere.local",
		"VSPHERE_PASSWORD": testPassword, "VSPHERE_DATACENTER": "/dc0",
	}})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { _ = cf.Remove() })
	return cf
}

func (f *fixture) input(scenario string, speed float64, args []string) RunInput {
	return RunInput{
		CLI:  standinBin,
		Args: args,
		Env: []string{"HOME=" + f.home, "TANZU_STANDIN_SCENARIO=" + scenario,
			"TANZU_STANDIN_SPEED=" + strconv.FormatFloat(speed, 'f', -1, 64),
			"TANZU_STANDIN_KUBECONFIG=" + f.kubeconfig, "TANZU_STANDIN_CHILD_PIDFILE=" + f.pidfile},
		Transcript: filepath.Join(f.artifacts, "tanzu", scenario+".log"),
		Redactor:   f.red,
		Timeout:    time.Minute,
		KillGrace:  5 * time.Second,
	}
}

func (f *fixture) transcript(in RunInput) string {
	f.t.Helper()
	b, err := os.ReadFile(in.Transcript)
	if err != nil {
		f.t.Fatal(err)
	}
	return string(b)
}

// childPID is the pid of the process the stand-in started, or 0.
func (f *fixture) childPID() int {
	b, err := os.ReadFile(f.pidfile)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// running reports whether pid is a live process (a zombie is not: it runs
// nothing and holds nothing, it only waits for a parent to read its status).
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || len(s) < i+3 || s[i+2] != 'Z'
}

// groupMembers lists the live processes of process group pgid.
func groupMembers(t *testing.T, pgid int) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if g, err := syscall.Getpgid(pid); err == nil && g == pgid && running(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// assertNothingLeft fails when the command's child or any member of its
// process group still runs. A killed process closes its files (so Run sees
// the end of the output) a moment before it stops being listed as running;
// on a loaded machine that moment shows, so the check gives the kill a
// little time. A group that was not killed keeps running far longer.
func (f *fixture) assertNothingLeft(res *Result) {
	f.t.Helper()
	child := f.childPID()
	if child == 0 {
		f.t.Errorf("the stand-in wrote no child pid to %s: the test proves nothing about the group kill", f.pidfile)
	}
	if res == nil || res.PID == 0 {
		f.t.Fatalf("Result has no PID")
	}
	var left []int
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		left = groupMembers(f.t, res.PID)
		if child != 0 && running(child) && !slices.Contains(left, child) {
			left = append(left, child)
		}
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(left) > 0 {
		f.t.Errorf("processes of the command's group %d (child %d) still run 3s after Run returned: %v", res.PID, child, left)
		_ = syscall.Kill(-res.PID, syscall.SIGKILL)
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func phaseNames(ps []Phase) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

func runCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}
