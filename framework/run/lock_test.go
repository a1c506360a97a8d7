package run

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The test binary doubles as the "other process": with RUN_LOCK_HELPER=<dir>
// it opens the run in dir (run.New), says "locked" and waits for stdin to close.
func TestMain(m *testing.M) {
	if dir := os.Getenv("RUN_LOCK_HELPER"); dir != "" {
		s, err := New(dir, filepath.Base(dir), "local", "config/local.yaml")
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(3)
		}
		fmt.Println("locked", s.ShortID())
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// startHolder runs the helper process on dir and returns once it holds the lock.
func startHolder(t *testing.T, dir string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "RUN_LOCK_HELPER="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "locked") {
		t.Fatalf("helper did not lock: %q %v", line, err)
	}
	return cmd
}

func TestSecondProcessIsToldWhoHasTheRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "20261122-141501-abcde")
	holder := startHolder(t, dir)

	_, err := New(dir, filepath.Base(dir), "local", "config/local.yaml")
	var inUse *InUseError
	if !errors.As(err, &inUse) {
		t.Fatalf("second open of a run in use: got %v, want an InUseError", err)
	}
	host, _ := os.Hostname()
	want := fmt.Sprintf("run 20261122-141501-abcde is in use by pid %d on host %s (user %s, since ", holder.Process.Pid, host, CurrentOwner().User)
	if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "wait for it or pick another ARTIFACTS folder") {
		t.Fatalf("error:\n%v\nwant it to contain:\n%s", err, want)
	}
	// Resume and cleanup (Load) are refused the same way.
	if _, err := Load(dir); !errors.As(err, &inUse) {
		t.Fatalf("Load of a run in use: %v", err)
	}

	// Once the holder is gone (killed: its lock file still names it), the
	// run is taken over, with a note naming the stale holder.
	_ = holder.Process.Kill()
	_ = holder.Wait()
	s, err := Load(dir)
	if err != nil {
		t.Fatalf("run of a killed process not taken over: %v", err)
	}
	defer s.Close()
	note := s.LockNote()
	if !strings.Contains(note, "stale lock") || !strings.Contains(note, "pid "+strconv.Itoa(holder.Process.Pid)) {
		t.Fatalf("takeover note: %q", note)
	}
	info := readLockFile(t, dir)
	if info.PID != os.Getpid() {
		t.Fatalf("lock file names pid %d after takeover, want %d", info.PID, os.Getpid())
	}
}

func readLockFile(t *testing.T, dir string) LockInfo {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, LockFile))
	if err != nil {
		t.Fatal(err)
	}
	var info LockInfo
	if err := json.Unmarshal(b, &info); err != nil {
		t.Fatalf("lock file %q: %v", b, err)
	}
	return info
}

// A lock file left by a process that is gone (no flock held) is taken over.
func TestStaleLockFileIsTakenOver(t *testing.T) {
	dir := t.TempDir()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Skip("no `true` to make a dead pid:", err)
	}
	host, _ := os.Hostname()
	b, _ := json.Marshal(LockInfo{RunID: "old", PID: gone.Process.Pid, Host: host, User: "someone", Since: time.Now().Add(-time.Hour)})
	must(t, os.WriteFile(filepath.Join(dir, LockFile), b, 0o644))

	s, err := New(dir, "r2", "local", "config/local.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if note := s.LockNote(); !strings.Contains(note, "stale lock") || !strings.Contains(note, fmt.Sprintf("pid %d", gone.Process.Pid)) ||
		!strings.Contains(note, "process is gone") {
		t.Fatalf("note: %q", note)
	}
	must(t, s.Close())
	// A clean release leaves an empty lock file: the next open has no note.
	s, err = New(dir, "r3", "local", "config/local.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.LockNote() != "" {
		t.Fatalf("note after a clean release: %q", s.LockNote())
	}
}

// One process opening its own run twice (New, then Load for a report) shares
// the lock instead of locking itself out.
func TestSameProcessSharesTheLock(t *testing.T) {
	dir, s := newState(t)
	back, err := Load(dir)
	if err != nil {
		t.Fatalf("second open in the same process: %v", err)
	}
	must(t, back.Close())
	must(t, s.Close())
}

func TestNewRefusesAFolderWithLiveResources(t *testing.T) {
	dir, s := newState(t)
	must(t, s.PutResource(Resource{Kind: "kind-cluster", Name: "tkg-kind", Role: "bootstrap", State: "ready"}))
	must(t, s.PutResource(Resource{Kind: "capi-cluster", Name: "mgmt", Namespace: "default", State: "creating"}))
	must(t, s.PutResource(Resource{Kind: "vsphere-template", Name: "old", State: "deleted"}))
	must(t, s.Close())

	_, err := New(dir, "r2", "local", "config/local.yaml")
	var liveErr *LiveResourcesError
	if !errors.As(err, &liveErr) {
		t.Fatalf("New over live resources: got %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"kind-cluster tkg-kind (ready)", "capi-cluster default/mgmt (creating)",
		"make clean-run ARTIFACTS=" + dir, "RESUME=1"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "vsphere-template") {
		t.Errorf("a deleted resource is listed:\n%s", msg)
	}
	// The refused New left the kept state alone and released the lock.
	back, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if back.RunID != "r1" || len(back.Live()) != 2 {
		t.Fatalf("kept state changed: %s %v", back.RunID, back.Live())
	}
	// Once everything is deleted or gone, the folder can hold a new run.
	must(t, back.SetResourceState("kind-cluster//tkg-kind", "deleted"))
	must(t, back.SetResourceState("capi-cluster/default/mgmt", "gone"))
	must(t, back.Close())
	s2, err := New(dir, "r2", "local", "config/local.yaml")
	if err != nil {
		t.Fatalf("New over a cleaned run: %v", err)
	}
	must(t, s2.Close())
}

func TestNewRefusesAnUnreadableState(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, StateFile), []byte("{"), 0o644))
	if _, err := New(dir, "r2", "local", "config/local.yaml"); err == nil || !strings.Contains(err.Error(), "cannot be read") {
		t.Fatalf("got %v", err)
	}
}

func TestRunIDsAreUniqueAndCarryAShortID(t *testing.T) {
	seen := map[string]bool{}
	for range 20000 {
		id := NewRunID()
		if seen[id] {
			t.Fatalf("run ID %s issued twice", id)
		}
		seen[id] = true
		if !runIDPattern.MatchString(id) {
			t.Fatalf("run ID %q has the wrong form", id)
		}
		if short := ShortIDOf(id); !ValidShortID(short) || !strings.HasSuffix(id, "-"+short) {
			t.Fatalf("short ID %q of %q", short, id)
		}
	}
	for _, id := range []string{"r1", "my-run", "verify-20261122-101500"} {
		if short := ShortIDOf(id); !ValidShortID(short) || short != ShortIDOf(id) {
			t.Fatalf("short ID %q of %q", short, id)
		}
	}
}

func TestCreateRunFolderIsExclusive(t *testing.T) {
	root := filepath.Join(t.TempDir(), "artifacts") // does not exist yet
	seen := map[string]bool{}
	for range 200 {
		dir, id, err := CreateRunFolder(root)
		if err != nil {
			t.Fatal(err)
		}
		if seen[dir] || filepath.Base(dir) != id {
			t.Fatalf("folder %s (id %s) reused", dir, id)
		}
		seen[dir] = true
	}
}

func TestShortIDIsRecordedAndKept(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "20261122-141501-k3f9a")
	s, err := New(dir, filepath.Base(dir), "local", "c")
	if err != nil {
		t.Fatal(err)
	}
	if s.ShortID() != "k3f9a" {
		t.Fatalf("short ID %q", s.ShortID())
	}
	must(t, s.Close())
	// A folder someone named gets a random short ID, and keeps it on resume.
	dir2 := filepath.Join(t.TempDir(), "my-run")
	s2, err := New(dir2, "my-run", "local", "c")
	if err != nil {
		t.Fatal(err)
	}
	short := s2.ShortID()
	must(t, s2.Close())
	back, err := Load(dir2)
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	if !ValidShortID(short) || back.ShortID() != short {
		t.Fatalf("short ID %q, after load %q", short, back.ShortID())
	}
}

func TestResumeRefusesAnotherUsersRun(t *testing.T) {
	dir, s := newState(t)
	if s.Owner == nil || s.Owner.User == "" || s.Owner.Host == "" {
		t.Fatalf("owner not recorded: %+v", s.Owner)
	}
	must(t, s.Close())
	// Fake the owner in state.json.
	p := filepath.Join(dir, StateFile)
	var raw map[string]any
	b, _ := os.ReadFile(p)
	must(t, json.Unmarshal(b, &raw))
	raw["owner"] = map[string]any{"user": "alice", "uid": "424242", "host": "testbed-7"}
	b, _ = json.Marshal(raw)
	must(t, os.WriteFile(p, b, 0o644))

	_, err := Resume(dir, false)
	var foreign *ForeignRunError
	if !errors.As(err, &foreign) {
		t.Fatalf("resume of alice's run: got %v", err)
	}
	for _, want := range []string{"run r1 (" + dir + ") belongs to alice@testbed-7", "RESUME_FOREIGN=1", "ARTIFACTS="} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	// The refusal released the lock; told to, it resumes.
	back, err := Resume(dir, true)
	if err != nil {
		t.Fatalf("RESUME_FOREIGN: %v", err)
	}
	defer back.Close()
	if d := back.Describe(); !strings.Contains(d, "run r1 ("+dir+"), created by alice@testbed-7 at ") {
		t.Fatalf("describe: %q", d)
	}
	// One's own run resumes without being told.
	dir2, s2 := newState(t)
	must(t, s2.Close())
	mine, err := Resume(dir2, false)
	if err != nil {
		t.Fatalf("resume of my own run: %v", err)
	}
	must(t, mine.Close())
}

// A state written before owners were recorded belongs to its file's owner.
func TestOwnerOfAnOldStateIsTheFileOwner(t *testing.T) {
	dir, s := newState(t)
	s.Owner = nil
	must(t, s.save())
	must(t, s.Close())
	back, err := Resume(dir, false)
	if err != nil {
		t.Fatalf("resume of my own old state: %v", err)
	}
	defer back.Close()
	if o := back.RunOwner(); o.UID != strconv.Itoa(os.Getuid()) {
		t.Fatalf("owner of an old state: %+v", o)
	}
}

func TestTempFilesAreUniqueAndCleaned(t *testing.T) {
	dir, s := newState(t)
	defer s.Close()
	done := make(chan error)
	for i := range 8 {
		go func() {
			done <- s.PutResource(Resource{Kind: "k", Name: strconv.Itoa(i), State: "ready"})
		}()
	}
	for range 8 {
		must(t, <-done)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*tmp*"))
	if len(left) != 0 {
		t.Fatalf("temp files left: %v", left)
	}
	// Two writers of the same file (two States of one folder) never share a temp file.
	p := filepath.Join(dir, "x.json")
	errs := make(chan error)
	for i := range 16 {
		go func() { errs <- writeFileAtomic(p, []byte(strings.Repeat(strconv.Itoa(i%10), 1000)), 0o644) }()
	}
	for range 16 {
		must(t, <-errs)
	}
	b, _ := os.ReadFile(p)
	if len(b) != 1000 || strings.Count(string(b), string(b[0])) != 1000 {
		t.Fatalf("interleaved write: %q...", b[:20])
	}
}

func TestStageStepsAreKeptPerStageRun(t *testing.T) {
	s, err := New(filepath.Join(t.TempDir(), "run"), "run", "local", "c")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.SetStageSteps("management", []StepTiming{{Name: "x"}}); err == nil {
		t.Error("steps of a stage that has not started were accepted")
	}
	must(t, s.StartStage("management"))
	must(t, s.SetStageSteps("management", []StepTiming{{Name: "tanzu/prepare", Seconds: 1}}))
	if got := s.StageSteps(); len(got["management"]) != 1 || got["management"][0].Name != "tanzu/prepare" {
		t.Errorf("StageSteps = %+v", got)
	}
	// A stage that runs again (RESUME=1 after a failure) starts without the old steps.
	must(t, s.StartStage("management"))
	if got := s.StageSteps(); got != nil {
		t.Errorf("a restarted stage kept its old steps: %+v", got)
	}
}
