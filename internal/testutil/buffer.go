// Package testutil holds helpers that tests in several packages share.
package testutil

import (
	"bytes"
	"sync"
)

// SyncBuffer is an io.Writer that several goroutines (a progress printer, a
// command's output reader) may write to while the test reads it.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
