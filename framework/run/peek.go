package run

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Summary is what Peek reads of a state file.
type Summary struct {
	RunID   string `json:"runID"`
	Profile string `json:"profile"`
}

// Peek reads a run's ID and profile without opening (and locking) the run,
// for a caller that must choose how to open it.
func Peek(dir string) (Summary, error) {
	var s Summary
	b, err := os.ReadFile(filepath.Join(dir, StateFile))
	if err != nil {
		return s, fmt.Errorf("reading the run's state: %w (is %s a run folder?)", err, dir)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("%s: %w", filepath.Join(dir, StateFile), err)
	}
	return s, nil
}
