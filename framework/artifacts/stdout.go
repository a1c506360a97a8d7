package artifacts

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/tkg-e2e/harness/framework/redact"
)

// Redacting wraps out (GinkgoWriter, os.Stdout, a progress writer) so that
// what is printed is masked by the same rules as the files. It buffers up to
// a newline; Flush it (or Close it) when the stream ends.
func (w *Writer) Redacting(out io.Writer) *redact.LineWriter {
	return w.red.Writer(out)
}

// RedirectStdout replaces os.Stdout with a pipe whose content reaches the
// previous stdout through red. Libraries the harness calls print with
// fmt.Printf (Cluster API's test framework does) and child processes inherit
// os.Stdout when a command sets cmd.Stdout = os.Stdout; both are then masked.
// Writes that hold fd 1 directly (Ginkgo's own reporter) are not affected,
// which is why GinkgoWriter output goes through Redacting as well.
//
// restore puts the previous os.Stdout back after flushing what is in flight;
// call it before the process exits.
func RedirectStdout(red *redact.Redactor) (restore func() error, err error) {
	if red == nil {
		return nil, errors.New("artifacts: RedirectStdout needs a redactor (Writer.Redactor())")
	}
	orig := os.Stdout
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("artifacts: redirect stdout: %w", err)
	}
	lw := red.Writer(orig)
	done := make(chan error, 1)
	go func() {
		_, cerr := io.Copy(lw, pr)
		if ferr := lw.Flush(); cerr == nil {
			cerr = ferr
		}
		_ = pr.Close()
		done <- cerr
	}()
	os.Stdout = pw
	var once sync.Once
	return func() error {
		var rerr error
		once.Do(func() {
			os.Stdout = orig
			_ = pw.Close()
			rerr = <-done
		})
		return rerr
	}, nil
}
