package run

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// LockFile is the name of the lock file inside a run folder. The process
// that opens a run (New, Load, Resume) holds an exclusive flock on it for as
// long as it lives (or until State.Close), and writes who it is into it, so a
// second process that opens the same run is told who has it.
const LockFile = "run.lock"

// LockInfo is what the lock file says about its holder.
type LockInfo struct {
	RunID string    `json:"runID"`
	PID   int       `json:"pid"`
	Host  string    `json:"host"`
	User  string    `json:"user"`
	Since time.Time `json:"since"`
}

// InUseError: another process holds the run's lock.
type InUseError struct {
	RunID string
	Dir   string
	Info  LockInfo
}

func (e *InUseError) Error() string {
	pid, host, user, since := "?", "?", "?", "?"
	if e.Info.PID != 0 {
		pid = strconv.Itoa(e.Info.PID)
	}
	if e.Info.Host != "" {
		host = e.Info.Host
	}
	if e.Info.User != "" {
		user = e.Info.User
	}
	if !e.Info.Since.IsZero() {
		since = e.Info.Since.Format(time.RFC3339)
	}
	return fmt.Sprintf("run %s is in use by pid %s on host %s (user %s, since %s); wait for it or pick another ARTIFACTS folder (%s)",
		e.RunID, pid, host, user, since, e.Dir)
}

// runLock is this process's hold on one run folder; New and Load of the same
// folder in one process share it (flock is per open file description, so a
// second open would lock this process out of its own run).
type runLock struct {
	dir  string
	f    *os.File
	refs int
	note string
}

var (
	locksMu sync.Mutex
	locks   = map[string]*runLock{} // by absDir; also keeps each *os.File reachable
)

// acquireLock takes (or shares, within this process) the lock of the run
// folder dir, creating the folder. note is set when a stale lock was taken over.
func acquireLock(dir, runID string) (*runLock, error) {
	key, err := absDir(dir)
	if err != nil {
		return nil, err
	}
	locksMu.Lock()
	defer locksMu.Unlock()
	if l, ok := locks[key]; ok {
		l.refs++
		return l, nil
	}
	if err := os.MkdirAll(key, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create the run folder %s: %w", key, err)
	}
	path := filepath.Join(key, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644) // O_CLOEXEC: children never inherit it
	if err != nil {
		return nil, fmt.Errorf("cannot open the run lock %s: %w", path, err)
	}
	if err := flock(f); err != nil {
		f.Close()
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("cannot lock %s: %w", path, err)
		}
		info := readHolder(path)
		if runID == "" {
			runID = info.RunID
		}
		if runID == "" {
			runID = filepath.Base(key)
		}
		return nil, &InUseError{RunID: runID, Dir: key, Info: info}
	}
	if runID == "" {
		runID = filepath.Base(key)
	}
	prev, _ := parseLock(f)
	me := CurrentOwner()
	l := &runLock{dir: key, f: f, refs: 1, note: staleNote(runID, prev, me.Host)}
	info := LockInfo{RunID: runID, PID: os.Getpid(), Host: me.Host, User: me.User, Since: time.Now().UTC()}
	if err := writeLock(f, info); err != nil {
		f.Close()
		return nil, fmt.Errorf("cannot write the run lock %s: %w", path, err)
	}
	locks[key] = l
	return l, nil
}

// release drops one reference; the last one empties the file (a clean
// release leaves no holder behind) and unlocks.
func (l *runLock) release() error {
	if l == nil {
		return nil
	}
	locksMu.Lock()
	defer locksMu.Unlock()
	if l.refs--; l.refs > 0 {
		return nil
	}
	delete(locks, l.dir)
	err := l.f.Truncate(0)
	if cerr := l.f.Close(); err == nil { // closing the description drops the flock
		err = cerr
	}
	return err
}

func flock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// readHolder reads the holder of a lock someone else has; it retries briefly,
// as the holder writes the file just after taking the lock.
func readHolder(path string) LockInfo {
	for i := 0; ; i++ {
		f, err := os.Open(path)
		if err == nil {
			info, ok := parseLock(f)
			f.Close()
			if ok || i >= 10 {
				return info
			}
		} else if i >= 10 {
			return LockInfo{}
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func parseLock(f *os.File) (LockInfo, bool) {
	var info LockInfo
	b, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<20))
	if err != nil || len(b) == 0 {
		return info, false
	}
	if json.Unmarshal(b, &info) != nil || info.PID == 0 {
		return LockInfo{}, false
	}
	return info, true
}

func writeLock(f *os.File, info LockInfo) error {
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.WriteAt(append(b, '\n'), 0); err != nil {
		return err
	}
	return f.Sync()
}

// staleNote describes the holder a lock file still named when its flock was
// free: a process that ended without releasing it (killed, or a run that kept
// its lock to the end).
func staleNote(runID string, prev LockInfo, host string) string {
	if prev.PID == 0 {
		return ""
	}
	who := fmt.Sprintf("pid %d on host %s (user %s, since %s)", prev.PID, prev.Host, prev.User, prev.Since.Format(time.RFC3339))
	switch {
	case prev.Host != host:
		return fmt.Sprintf("run %s: took over the lock left by %s; its flock was free", runID, who)
	case prev.PID == os.Getpid():
		return ""
	case pidAlive(prev.PID):
		return fmt.Sprintf("run %s: took over the lock left by %s; that pid runs but does not hold the lock (reused pid)", runID, who)
	default:
		return fmt.Sprintf("run %s: took over a stale lock left by %s; that process is gone", runID, who)
	}
}

func pidAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// LockNote says whether opening the run took over a stale lock, and whose
// ("" when the lock was free and clean).
func (s *State) LockNote() string {
	if s.lock == nil {
		return ""
	}
	return s.lock.note
}

// Close releases this State's hold on the run lock. The process keeps the
// lock while another State of the same folder is open; without Close, the
// lock lasts as long as the process.
func (s *State) Close() error {
	s.mu.Lock()
	l := s.lock
	s.lock = nil
	s.mu.Unlock()
	return l.release()
}
