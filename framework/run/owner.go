package run

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Owner is who started a run: the OS user and the host. RESUME=1 attaches to
// a run's clusters and deletes them at the end, so it refuses a run of
// another user unless told (RESUME_FOREIGN=1).
type Owner struct {
	User string `json:"user"`
	UID  string `json:"uid,omitempty"`
	Host string `json:"host"`
}

func (o Owner) String() string {
	if o.Host == "" {
		return o.User
	}
	return o.User + "@" + o.Host
}

// CurrentOwner is the user and host of this process.
func CurrentOwner() Owner {
	o := Owner{UID: strconv.Itoa(os.Getuid())}
	if u, err := user.Current(); err == nil {
		o.User = u.Username
	}
	if o.User == "" {
		o.User = os.Getenv("USER")
	}
	if o.User == "" {
		o.User = "uid " + o.UID
	}
	o.Host, _ = os.Hostname()
	return o
}

// sameUser: by uid when both have one, else by name.
func (o Owner) sameUser(p Owner) bool {
	if o.UID != "" && p.UID != "" {
		return o.UID == p.UID
	}
	return o.User == p.User
}

// ForeignRunError: the run belongs to another OS user.
type ForeignRunError struct {
	RunID, Dir string
	Owner, You Owner
	Created    time.Time
}

func (e *ForeignRunError) Error() string {
	return fmt.Sprintf("run %s (%s) belongs to %s, created %s; you are %s. RESUME=1 re-attaches to its clusters and "+
		"deletes them at the end: pick your own run with ARTIFACTS=<folder>, or set RESUME_FOREIGN=1 if you mean to take it over",
		e.RunID, e.Dir, e.Owner, e.Created.Format(time.RFC3339), e.You)
}

// RunOwner returns who started the run: the owner recorded in the state
// file, or, for a state written before owners were recorded, the owner of
// the file itself.
func (s *State) RunOwner() Owner {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Owner != nil {
		return *s.Owner
	}
	o := Owner{User: "unknown"}
	if fi, err := os.Stat(s.path); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			o.UID = strconv.FormatUint(uint64(st.Uid), 10)
			o.User = "uid " + o.UID
			if u, err := user.LookupId(o.UID); err == nil {
				o.User = u.Username
			}
		}
	}
	return o
}

// CheckOwner returns a *ForeignRunError when the run belongs to another OS
// user and allowForeign is false.
func (s *State) CheckOwner(allowForeign bool) error {
	owner, you := s.RunOwner(), CurrentOwner()
	if owner.sameUser(you) || allowForeign {
		return nil
	}
	return &ForeignRunError{RunID: s.RunID, Dir: s.Dir(), Owner: owner, You: you, Created: s.Started}
}

// Describe names the run for people: "run <id> (<folder>), created by <user> at <time>".
func (s *State) Describe() string {
	at := "an unknown time"
	if !s.Started.IsZero() {
		at = s.Started.Format(time.RFC3339)
	}
	return fmt.Sprintf("run %s (%s), created by %s at %s", s.RunID, s.Dir(), s.RunOwner(), at)
}

// Resume opens the kept run in dir to re-attach to it: it takes the run's
// lock (Load) and refuses a run of another OS user unless allowForeign.
func Resume(dir string, allowForeign bool) (*State, error) {
	s, err := Load(dir)
	if err != nil {
		return nil, err
	}
	if err := s.CheckOwner(allowForeign); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// absDir is the folder as the lock registry keys it: absolute, symlinks
// (artifacts/latest) resolved where possible.
func absDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real, nil
	}
	return abs, nil
}
