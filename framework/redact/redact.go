// Package redact removes secrets from text before it reaches stdout, logs or
// artifacts. It knows two kinds of secret: values registered at run time (the
// vCenter password, tokens read from the environment), which are replaced
// wherever they appear, also in base64; and shapes that are secret whatever
// their value (PEM private keys, kubeconfig tokens and client keys, the data of
// a Kubernetes Secret), which are replaced by pattern.
package redact

import (
	"bytes"
	"encoding/base64"
	"io"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Mask replaces every redacted value.
const Mask = "<redacted>"

var patterns = []struct {
	re   *regexp.Regexp
	repl string
}{
	// PEM blocks holding keys (certificates are public, keys are not).
	{regexp.MustCompile(`(?s)-----BEGIN ([A-Z ]*PRIVATE KEY)-----.*?-----END ([A-Z ]*PRIVATE KEY)-----`), "-----BEGIN $1-----\n" + Mask + "\n-----END $2-----"},
	// kubeconfig / YAML fields whose value is a credential. A value stops at
	// "</" so that in HTML and XML reports the closing tag that follows a
	// value is not taken for part of it.
	{regexp.MustCompile(`(?m)((?:client-key-data|client-certificate-data|token|id-token|refresh-token|password|access-token|bearerToken|bearer-token)\s*:\s*)("?)(?:[^\s"<]|<[^/\s"])+("?)`), "${1}${2}" + Mask + "${3}"},
	// JSON renderings of the same fields.
	{regexp.MustCompile(`("(?:client-key-data|client-certificate-data|token|password|access-token|bearerToken)"\s*:\s*")[^"]*(")`), "${1}" + Mask + "${2}"},
	// HTTP authorization headers.
	{regexp.MustCompile(`(?i)(authorization:\s*(?:bearer|basic)\s+)(?:[^\s<]|<[^/\s])+`), "${1}" + Mask},
	// Credentials in URLs: https://user:pass@host.
	{regexp.MustCompile(`(://[^/\s:@]+:)[^@\s/]+@`), "${1}" + Mask + "@"},
	// Credentials on command lines, as journals and process listings show
	// them: kubeadm join --token, --password=..., --client-key-data.
	{regexp.MustCompile(`(--(?:token|password|client-key-data|bootstrap-token|client-secret)[= ])(?:[^\s"'<]|<[^/\s"'])+`), "${1}" + Mask},
}

// Redactor masks registered values and secret shapes. The zero value is not
// usable; call New. It is safe for concurrent use.
type Redactor struct {
	mu       sync.RWMutex
	values   []string
	replacer *strings.Replacer
	// minRun is the shortest base64 run that can hold a registered value.
	minRun int
}

// New returns a Redactor that masks the given values (and their base64 forms).
func New(values ...string) *Redactor {
	r := &Redactor{}
	r.Add(values...)
	return r
}

// Add registers more secret values. Empty values are ignored; short ones are
// masked too (config validation rejects passwords under 8 characters, but a
// value the run handles is masked whatever its length).
func (r *Redactor) Add(values ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[string]bool{}
	for _, v := range r.values {
		seen[v] = true
	}
	for _, v := range values {
		if v != "" && (r.minRun == 0 || 4*len(v)/3 < r.minRun) {
			r.minRun = max(2, 4*len(v)/3)
		}
		for _, form := range Forms(v) {
			if !seen[form] {
				seen[form] = true
				r.values = append(r.values, form)
			}
		}
	}
	// Longest first, so a secret that contains another is masked whole.
	sort.Slice(r.values, func(i, j int) bool { return len(r.values[i]) > len(r.values[j]) })
	pairs := make([]string, 0, 2*len(r.values))
	for _, v := range r.values {
		pairs = append(pairs, v, Mask)
	}
	if len(pairs) > 0 {
		r.replacer = strings.NewReplacer(pairs...)
	}
}

// String masks secrets in s.
func (r *Redactor) String(s string) string {
	if r == nil {
		return s
	}
	r.mu.RLock()
	rep, minRun := r.replacer, r.minRun
	r.mu.RUnlock()
	if rep != nil {
		// Blobs first: a base64 run that decodes to text holding a
		// secret (a kubeconfig, cloud-init userdata) is masked whole,
		// whatever the secret's length and offset in it.
		s = maskBase64Runs(s, rep, minRun)
		s = rep.Replace(s)
	}
	// Secret objects first: their data lines look like ordinary YAML, and the
	// shape patterns below would otherwise leave them alone.
	s = maskSecretObjects(s)
	for _, p := range patterns {
		s = p.re.ReplaceAllString(s, p.repl)
	}
	return maskOrphanPEM(s)
}

// Bytes masks secrets in b.
func (r *Redactor) Bytes(b []byte) []byte { return []byte(r.String(string(b))) }

// Writer returns an io.Writer that masks what it is given before passing it on.
// It buffers until a newline so that a secret split across two Write calls is
// still masked; call Flush (or Close) to write a trailing partial line.
func (r *Redactor) Writer(w io.Writer) *LineWriter {
	return &LineWriter{r: r, w: w}
}

// LineWriter is the io.Writer returned by Redactor.Writer.
type LineWriter struct {
	mu  sync.Mutex
	r   *Redactor
	w   io.Writer
	buf []byte
}

// flushAt bounds the memory of output that never ends a line: a partial
// line this long is written (masked) without waiting for its newline.
const flushAt = 64 << 10

func (l *LineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	if i := bytes.LastIndexByte(p, '\n'); i >= 0 {
		if err := l.emit(len(l.buf) - len(p) + i + 1); err != nil {
			return 0, err
		}
	}
	for len(l.buf) >= flushAt {
		if err := l.emit(l.r.safeCut(l.buf)); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// emit masks and writes buf[:n], keeping the rest.
func (l *LineWriter) emit(n int) error {
	if _, err := l.w.Write(l.r.Bytes(l.buf[:n])); err != nil {
		return err
	}
	l.buf = append(l.buf[:0], l.buf[n:]...)
	return nil
}

// safeCut returns where a long partial line can be cut without splitting a
// secret: it keeps a tail longer than any registered form, prefers a byte
// that cannot be part of a base64 run or a word, and moves the cut before
// any registered form that would straddle it.
func (r *Redactor) safeCut(buf []byte) int {
	r.mu.RLock()
	values := r.values
	r.mu.RUnlock()
	keep := 256
	for _, v := range values {
		keep = max(keep, len(v)+256)
	}
	cut := max(len(buf)-keep, len(buf)/2)
	cut = preferredCut(buf, cut, max(len(buf)/4, cut-8192))
	for moved := true; moved; {
		moved = false
		for _, v := range values {
			lo := max(0, cut-len(v)+1)
			hi := min(len(buf), cut+len(v)-1)
			// The first occurrence in the window is the only one that
			// can start before the cut; any that does ends after it.
			if lo < hi {
				if j := bytes.Index(buf[lo:hi], []byte(v)); j >= 0 && lo+j < cut {
					cut, moved = lo+j, true
				}
			}
		}
	}
	if cut <= 0 {
		return len(buf)
	}
	return cut
}

// preferredCut moves cut back (not below lo) to just after a blank that
// ends a word, so "token: value" stays whole; failing that, to just after a
// byte that cannot be part of a base64 run; failing that, leaves it.
func preferredCut(buf []byte, cut, lo int) int {
	for i := cut - 1; i > lo; i-- {
		if (buf[i] == ' ' || buf[i] == '\t') && buf[i-1] != ':' && buf[i-1] != '=' && buf[i-1] != ' ' && buf[i-1] != '\t' {
			return i + 1
		}
	}
	for i := cut - 1; i > lo; i-- {
		if !isBase64Byte(buf[i]) {
			return i + 1
		}
	}
	return cut
}

func isBase64Byte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_' || c == '='
}

// maskBase64Runs replaces every run of base64 characters (either alphabet)
// whose decoding, at any of the four character offsets, holds a registered
// value in any form. A run shorter than 4n/3 characters cannot hold a value
// of n bytes and is not decoded (most words); the plain base64 of a value is
// one of its Forms anyway.
func maskBase64Runs(s string, rep *strings.Replacer, minRun int) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		if !isBase64Byte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isBase64Byte(s[j]) {
			j++
		}
		if j-i >= minRun && masksRun(s[i:j], rep) {
			if b.Len() == 0 {
				b.Grow(len(s))
			}
			b.WriteString(s[last:i])
			b.WriteString(Mask)
			last = j
		}
		i = j
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func masksRun(run string, rep *strings.Replacer) bool {
	for _, d := range DecodeBase64Run(run) {
		if rep.Replace(d) != d {
			return true
		}
	}
	return false
}

// DecodeBase64Run decodes a run of base64 characters at each of the four
// character offsets (the run may start mid-blob), in whichever alphabet its
// characters belong to, ignoring padding and a dangling last character. It
// returns the decodings that succeeded.
func DecodeBase64Run(run string) []string {
	run = strings.TrimRight(run, "=")
	std, urlsafe := strings.ContainsAny(run, "+/"), strings.ContainsAny(run, "-_")
	var encs []*base64.Encoding
	switch {
	case std && urlsafe:
		return nil
	case std:
		encs = []*base64.Encoding{base64.RawStdEncoding}
	case urlsafe:
		encs = []*base64.Encoding{base64.RawURLEncoding}
	default:
		encs = []*base64.Encoding{base64.RawStdEncoding}
	}
	var out []string
	for off := 0; off < 4 && off < len(run); off++ {
		t := run[off:]
		if len(t)%4 == 1 {
			t = t[:len(t)-1]
		}
		for _, enc := range encs {
			if b, err := enc.DecodeString(t); err == nil && len(b) > 0 {
				out = append(out, string(b))
			}
		}
	}
	return out
}

// Flush writes what is buffered.
func (l *LineWriter) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) == 0 {
		return nil
	}
	_, err := l.w.Write(l.r.Bytes(l.buf))
	l.buf = l.buf[:0]
	return err
}

// Close flushes.
func (l *LineWriter) Close() error { return l.Flush() }
