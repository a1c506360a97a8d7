package artifacts

import (
	"bytes"
	"path"
	"strings"

	"github.com/tkg-e2e/harness/framework/redact"
)

// escapedMask is the mask as XML and HTML must carry it: a bare <redacted>
// makes junit.xml invalid and is read as an unknown tag (and hidden) by
// browsers and Markdown renderers.
var escapedMask = []byte(strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(redact.Mask))

// encodeMasks rewrites the masks the redactor inserted so that the file stays
// valid and shows them, by file type. Markdown keeps the bare mask inside
// fenced code blocks, where it is shown as written.
func encodeMasks(rel string, b []byte) []byte {
	mask := []byte(redact.Mask)
	if !bytes.Contains(b, mask) {
		return b
	}
	switch strings.ToLower(path.Ext(rel)) {
	case ".xml", ".html", ".htm", ".svg":
		return bytes.ReplaceAll(b, mask, escapedMask)
	case ".md", ".markdown":
		lines := bytes.SplitAfter(b, []byte("\n"))
		var fence []byte // the open fence, nil outside a code block
		for i, l := range lines {
			t := bytes.TrimSpace(l)
			switch {
			case fence == nil && isFence(t):
				n := 0
				for n < len(t) && t[n] == t[0] {
					n++
				}
				fence = t[:n]
				continue
			case fence != nil:
				if bytes.HasPrefix(t, fence) && len(bytes.Trim(t, string(fence[:1]))) == 0 {
					fence = nil
				}
				continue
			}
			lines[i] = bytes.ReplaceAll(l, mask, escapedMask)
		}
		return bytes.Join(lines, nil)
	}
	return b
}

func isFence(t []byte) bool {
	return bytes.HasPrefix(t, []byte("```")) || bytes.HasPrefix(t, []byte("~~~"))
}
