package run

import (
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"
)

// A run ID is the UTC start time to the second and a short random suffix,
// e.g. 20261122-141501-k3f9a. The suffix is the run's short ID: cluster and
// template names carry it so that runs sharing a testbed never touch each
// other's things.
const (
	runIDTimeFormat = "20060102-150405"
	// ShortIDLen is the length of a short ID: a lowercase letter, then
	// lowercase letters and digits (a DNS label, and an RFC 1035 one).
	ShortIDLen = 5
)

const (
	letters = "abcdefghijklmnopqrstuvwxyz"
	alnum   = letters + "0123456789"
)

var (
	runIDPattern   = regexp.MustCompile(`^\d{8}-\d{6}-([a-z][a-z0-9]{3,5})$`)
	shortIDPattern = regexp.MustCompile(`^[a-z][a-z0-9]{3,5}$`)

	issuedMu sync.Mutex
	issued   = map[string]bool{} // run IDs handed out by this process
)

// NewRunID returns a run ID no other call in this process returned; between
// processes the random suffix (26·36⁴ values per second) and CreateRunFolder's
// exclusive mkdir keep them apart.
func NewRunID() string {
	issuedMu.Lock()
	defer issuedMu.Unlock()
	for {
		id := time.Now().UTC().Format(runIDTimeFormat) + "-" + newShortID()
		if !issued[id] {
			issued[id] = true
			return id
		}
	}
}

// newShortID returns ShortIDLen random characters, the first a letter.
func newShortID() string {
	b := make([]byte, ShortIDLen)
	if _, err := rand.Read(b); err != nil {
		panic("run: no randomness: " + err.Error()) // crypto/rand does not fail on Linux
	}
	out := make([]byte, ShortIDLen)
	out[0] = letters[int(b[0])%len(letters)]
	for i := 1; i < ShortIDLen; i++ {
		out[i] = alnum[int(b[i])%len(alnum)]
	}
	return string(out)
}

// ShortIDOf returns the short ID a run ID carries (its suffix), or, for a run
// ID of another form (a folder someone named), a stable hash of it.
func ShortIDOf(runID string) string {
	if m := runIDPattern.FindStringSubmatch(runID); m != nil {
		return m[1]
	}
	sum := sha256.Sum256([]byte(runID))
	out := make([]byte, ShortIDLen)
	out[0] = letters[int(sum[0])%len(letters)]
	for i := 1; i < ShortIDLen; i++ {
		out[i] = alnum[int(sum[i])%len(alnum)]
	}
	return string(out)
}

// ValidShortID reports whether s can be a short ID (4-6 characters, a
// lowercase letter then lowercase letters and digits).
func ValidShortID(s string) bool { return shortIDPattern.MatchString(s) }

// CreateRunFolder makes a new, empty run folder under root named by a fresh
// run ID (exclusive mkdir: two processes never get the same folder) and
// returns its absolute path and the run ID.
func CreateRunFolder(root string) (dir, runID string, err error) {
	root, err = filepath.Abs(root)
	if err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", "", fmt.Errorf("cannot create the artifacts root %s: %w", root, err)
	}
	for range 100 {
		runID = NewRunID()
		dir = filepath.Join(root, runID)
		err = os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, runID, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", "", fmt.Errorf("cannot create the run folder: %w", err)
		}
	}
	return "", "", fmt.Errorf("cannot create a run folder under %s: %w", root, err)
}

// ShortID is the run's short ID (4-6 lowercase letters and digits, starting
// with a letter; DNS-label safe), for names of what the run creates.
func (s *State) ShortID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Short != "" {
		return s.Short
	}
	return ShortIDOf(s.RunID)
}
