package wait

import (
	"fmt"
	"io"
	"strings"
)

// Printer writes one-off progress lines with the same prefix as the waits
// (which print their own through For). A nil W makes it silent.
type Printer struct {
	W      io.Writer
	Prefix string
}

// Printf writes one line, prefixed.
func (p Printer) Printf(format string, args ...any) {
	if p.W == nil {
		return
	}
	prefix := p.Prefix
	if prefix != "" {
		prefix += " "
	}
	fmt.Fprintf(p.W, "%s%s\n", prefix, strings.TrimRight(fmt.Sprintf(format, args...), "\n"))
}
