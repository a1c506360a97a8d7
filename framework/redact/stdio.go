package redact

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Stdio is the process's standard output and error behind a redactor. While
// it is active, file descriptors 1 and 2 are pipes whose reader masks each
// line and forwards it to the real output; so whatever writes there is
// masked: fmt, log and klog, Ginkgo's own reporter, and every child process
// that inherits them (exec.Cmd with Stdout: os.Stdout). Lines are masked
// whole, and a line longer than the streaming writer's flush is cut only
// where no registered secret straddles the cut.
type Stdio struct {
	streams []*stream
}

type stream struct {
	fd    int
	saved int      // a duplicate of the real destination
	real  *os.File // writes to saved
	pr    *os.File
	lw    *LineWriter
	done  chan struct{}
}

var (
	stdioMu     sync.Mutex
	stdioActive *Stdio
)

// RedirectStdio masks the process's stdout and stderr with r until Restore.
// Secrets added to r later are masked from then on. Only one redirect may be
// active; call Restore before the process exits (a deferred call after
// RunSpecs) so that the last lines are written.
func RedirectStdio(r *Redactor) (*Stdio, error) {
	return redirectFDs(r, 1, 2)
}

func redirectFDs(r *Redactor, fds ...int) (*Stdio, error) {
	stdioMu.Lock()
	defer stdioMu.Unlock()
	if stdioActive != nil {
		return nil, errors.New("redact: stdout and stderr are already redirected")
	}
	s := &Stdio{}
	for _, fd := range fds {
		st, err := redirectFD(r, fd)
		if err != nil {
			_ = s.restore(time.Second)
			return nil, err
		}
		s.streams = append(s.streams, st)
	}
	stdioActive = s
	return s, nil
}

func redirectFD(r *Redactor, fd int) (*stream, error) {
	saved, err := dup(fd)
	if err != nil {
		return nil, fmt.Errorf("redact: cannot duplicate fd %d: %w", fd, err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		closeFD(saved)
		return nil, fmt.Errorf("redact: %w", err)
	}
	if err := dup2(int(pw.Fd()), fd); err != nil {
		closeFD(saved)
		pr.Close()
		pw.Close()
		return nil, fmt.Errorf("redact: cannot redirect fd %d: %w", fd, err)
	}
	// fd now holds the pipe's write end; this copy is not needed.
	pw.Close()
	real := os.NewFile(uintptr(saved), fmt.Sprintf("real-fd-%d", fd))
	st := &stream{fd: fd, saved: saved, real: real, pr: pr, lw: r.Writer(real), done: make(chan struct{})}
	go func() {
		defer close(st.done)
		_, _ = io.Copy(st.lw, pr)
		_ = st.lw.Flush()
	}()
	return st, nil
}

// Restore puts the real stdout and stderr back and writes what is still
// buffered. Output of children that outlive the suite and still hold the
// pipes is waited for at most a few seconds.
func (s *Stdio) Restore() error {
	if s == nil {
		return nil
	}
	stdioMu.Lock()
	defer stdioMu.Unlock()
	err := s.restore(5 * time.Second)
	if stdioActive == s {
		stdioActive = nil
	}
	return err
}

func (s *Stdio) restore(wait time.Duration) error {
	var errs []error
	for _, st := range s.streams {
		// Point fd back at the real output: this drops the process's
		// hold on the pipe, so the reader ends once children let go.
		if err := dup2(st.saved, st.fd); err != nil {
			errs = append(errs, fmt.Errorf("redact: cannot restore fd %d: %w", st.fd, err))
		}
	}
	deadline := time.After(wait)
	for _, st := range s.streams {
		select {
		case <-st.done:
		case <-deadline:
			// A child still holds the pipe: stop reading; what was read
			// is flushed by the copier as it returns.
			st.pr.Close()
			<-st.done
		}
		st.pr.Close()
		st.real.Close()
	}
	s.streams = nil
	return errors.Join(errs...)
}
