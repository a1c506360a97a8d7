// Package redact removes secrets from text before it reaches stdout, logs or
// artifacts. It knows two kinds of secret: values registered at run time (the
// vCenter password, tokens read from the environment), which are replaced
// wherever they appear, also in base64; and shapes that are secret whatever
// their value (PEM private keys, kubeconfig tokens and client keys, the data of
// a Kubernetes Secret), which are replaced by pattern.
package redact

import (
	"io"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Mask replaces every redacted value.
const Mask = "<redacted>"

// minSecretLen avoids turning every "a" in a log into a mask because someone
// set a one-letter password; such a password is still masked by shape rules
// where they apply.
const minSecretLen = 4

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
}

// New returns a Redactor that masks the given values (and their base64 forms).
func New(values ...string) *Redactor {
	r := &Redactor{}
	r.Add(values...)
	return r
}

// Add registers more secret values. Empty and very short values are ignored.
func (r *Redactor) Add(values ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[string]bool{}
	for _, v := range r.values {
		seen[v] = true
	}
	for _, v := range values {
		for _, form := range Forms(v) {
			if len(form) >= minSecretLen && !seen[form] {
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
	r.replacer = strings.NewReplacer(pairs...)
}

// String masks secrets in s.
func (r *Redactor) String(s string) string {
	if r == nil {
		return s
	}
	r.mu.RLock()
	rep := r.replacer
	r.mu.RUnlock()
	if rep != nil {
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

func (l *LineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	i := strings.LastIndexByte(string(l.buf), '\n')
	if i < 0 {
		// Bound memory for output that never ends a line.
		if len(l.buf) < 64<<10 {
			return len(p), nil
		}
		i = len(l.buf) - 1
	}
	chunk := l.buf[:i+1]
	if _, err := l.w.Write(l.r.Bytes(chunk)); err != nil {
		return 0, err
	}
	l.buf = append(l.buf[:0], l.buf[i+1:]...)
	return len(p), nil
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
