package move

import (
	"fmt"
	"io"
	"strings"
)

// progress writes one-off lines (waits print their own through framework/wait).
type progress struct {
	w      io.Writer
	prefix string
}

func (p progress) printf(format string, args ...any) {
	if p.w == nil {
		return
	}
	prefix := p.prefix
	if prefix != "" {
		prefix += " "
	}
	fmt.Fprintf(p.w, "%s%s\n", prefix, strings.TrimRight(fmt.Sprintf(format, args...), "\n"))
}
