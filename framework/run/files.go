package run

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// live: a resource that may still exist (not deleted, gone, or moved into
// another cluster that is itself recorded).
func live(r Resource) bool {
	switch r.State {
	case "deleted", "gone", "moved":
		return false
	}
	return true
}

// shortIDFor is the short ID of a fresh run: the run ID's suffix when it has
// one, else a random one (recorded in the state, so a resume keeps it).
func shortIDFor(runID string) string {
	if runIDPattern.MatchString(runID) {
		return ShortIDOf(runID)
	}
	return newShortID()
}

func readState(p string) (*State, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("cannot resume: %w (RESUME=1 needs ARTIFACTS=<folder of a kept run> holding %s)", err, StateFile)
	}
	s := &State{}
	if err := json.Unmarshal(b, s); err != nil {
		return nil, fmt.Errorf("cannot resume: %s is not a valid state file: %w", p, err)
	}
	s.path = p
	return s, nil
}

// LiveResourcesError: a fresh run was asked to start in a folder whose state
// file lists resources that may still exist; starting would overwrite the
// only record of them.
type LiveResourcesError struct {
	Dir, RunID string
	Live       []Resource
}

func (e *LiveResourcesError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s already holds run %s, whose %s lists %d resource(s) not deleted:\n", e.Dir, e.RunID, StateFile, len(e.Live))
	for _, r := range e.Live {
		name := r.Name
		if r.Namespace != "" {
			name = r.Namespace + "/" + r.Name
		}
		fmt.Fprintf(&b, "  %s %s (%s)\n", r.Kind, name, r.State)
	}
	fmt.Fprintf(&b, "A new run there would overwrite the only record of them: delete them with `make clean-run ARTIFACTS=%s`, "+
		"re-attach with `RESUME=1 ARTIFACTS=%s`, or pick another ARTIFACTS folder", e.Dir, e.Dir)
	return b.String()
}

// checkReusable refuses a folder whose state file lists live resources (or
// cannot be read, so nobody can tell).
func checkReusable(dir string) error {
	p := filepath.Join(dir, StateFile)
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	old, err := readState(p)
	if err != nil {
		return fmt.Errorf("%s holds a state file that cannot be read (%v); it may be the only record of clusters that still exist: "+
			"look at it, then move it away or pick another ARTIFACTS folder", dir, err)
	}
	if l := old.Live(); len(l) > 0 {
		return &LiveResourcesError{Dir: dir, RunID: old.RunID, Live: l}
	}
	return nil
}

// writeFileAtomic writes a file through a temp file of its own in the same
// folder and a rename, so a reader (or a run killed mid-write) never sees a
// truncated file and two writers never share a temp file.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	name := tmp.Name()
	defer func() {
		if err != nil {
			os.Remove(name)
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err = tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	err = os.Rename(name, path)
	return err
}

// CheckFresh says whether New would accept dir as the folder of a fresh run
// (its lock is free and its state file, if any, lists nothing that may still
// exist), without writing a state. It creates dir.
func CheckFresh(dir string) (note string, err error) {
	lock, err := acquireLock(dir, "")
	if err != nil {
		return "", err
	}
	defer lock.release()
	return lock.note, checkReusable(dir)
}
