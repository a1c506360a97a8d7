package artifacts

import (
	"io"

	"github.com/tkg-e2e/harness/framework/redact"
)

// Redacting wraps out (GinkgoWriter, os.Stdout, a progress writer) so that
// what is printed is masked by the same rules as the files. It buffers up to
// a newline; Flush it (or Close it) when the stream ends.
func (w *Writer) Redacting(out io.Writer) *redact.LineWriter {
	return w.red.Writer(out)
}
