package run

import (
	"time"
)

// Lease is the Boskos resource a run took its testbed from. It is recorded
// the moment it is acquired, so `make clean-run` and RESUME=1 find the same
// testbed and release it, even after the process was killed.
type Lease struct {
	URL   string `json:"url"`
	Type  string `json:"type"`
	Name  string `json:"name"`
	Owner string `json:"owner"`
	// Acquired is when the run got it; Waited how long it queued first.
	Acquired      time.Time `json:"acquired"`
	WaitedSeconds float64   `json:"waitedSeconds"`
	// Values are the non-secret variables its user data supplied (the
	// secret ones are kept outside the artifacts, beside the kubeconfigs).
	Values map[string]string `json:"values,omitempty"`
	// SecretKeys name the secret variables it supplied (names only).
	SecretKeys []string `json:"secretKeys,omitempty"`
	// Released is empty while the run holds it, then "free", "dirty: <why>",
	// "kept (SKIP_CLEANUP=1)" or "lost: <why>".
	Released string `json:"released,omitempty"`
	// ReleasedAt is when Released was last set.
	ReleasedAt *time.Time `json:"releasedAt,omitempty"`
}

// Held reports whether the run still holds the lease (or kept it).
func (l *Lease) Held() bool {
	return l != nil && (l.Released == "" || l.Released == LeaseKept)
}

// LeaseKept is Released for a run that kept its testbed (SKIP_CLEANUP=1).
const LeaseKept = "kept (SKIP_CLEANUP=1)"

// SetLease records the run's lease.
func (s *State) SetLease(l Lease) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Lease = &l
	return s.saveLocked()
}

// SetLeaseReleased records how the lease ended.
func (s *State) SetLeaseReleased(msg string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Lease == nil {
		return nil
	}
	s.Lease.Released = msg
	now := time.Now().UTC()
	s.Lease.ReleasedAt = &now
	return s.saveLocked()
}

// LeaseRecord returns a copy of the lease, nil when the run has none.
func (s *State) LeaseRecord() *Lease {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Lease == nil {
		return nil
	}
	l := *s.Lease
	return &l
}

// CleanupOutcome is what SetCleanup recorded ("" before cleanup ran).
func (s *State) CleanupOutcome() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Cleanup
}
