// Package leakcheck finds secrets that reached text they should not reach:
// an artifacts folder, captured stdout. Tests, and the suite after a run, use
// it to prove the collectors and reports mask what they must.
//
// It does not share the redactor's list of renderings, so it can see what
// the redactor misses: each line is decoded, repeatedly and in every
// combination, by the escapes that can carry a value (base64 runs at any
// offset and in both alphabets, URL %XX escapes, JSON and YAML backslash
// escapes, YAML ” quoting, HTML and XML entities), and each secret is
// searched in raw form in every decoding. It also reports secret shapes
// (private keys, kubeconfig credentials, Secret data) that are not masked. A
// finding never contains the secret itself, so printing it in a test failure
// is safe.
package leakcheck

import (
	"errors"
	"fmt"
	"html"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tkg-e2e/harness/framework/redact"
)

// Finding is one leak.
type Finding struct {
	// File is relative to the scanned folder (or the name given to Text).
	File string
	Line int
	// What says which secret or shape leaked, without showing it.
	What string
}

func (f Finding) String() string { return fmt.Sprintf("%s:%d: %s", f.File, f.Line, f.What) }

// Dir scans every file under root. A folder or file that cannot be read
// (or a root that does not exist) is an error: a scan that did not see
// everything proves nothing. The findings of what could be read are still
// returned with the error.
func Dir(root string, secrets ...string) ([]Finding, error) {
	if fi, err := os.Stat(root); err != nil {
		return nil, fmt.Errorf("secret scan: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("secret scan: %s is not a folder", root)
	}
	return FS(os.DirFS(root), root, secrets...)
}

// FS scans every file of fsys as Dir does; root names it in errors.
func FS(fsys fs.FS, root string, secrets ...string) ([]Finding, error) {
	var out []Finding
	var errs []error
	walkErr := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			errs = append(errs, fmt.Errorf("secret scan: cannot read %s: %w", path.Join(root, p), err))
			if d != nil && d.IsDir() && p != "." {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() && d.Type()&fs.ModeSymlink == 0 {
			errs = append(errs, fmt.Errorf("secret scan: %s is not a regular file (%s); artifacts hold only files", path.Join(root, p), d.Type()))
			return nil
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			errs = append(errs, fmt.Errorf("secret scan: cannot read %s: %w", path.Join(root, p), err))
			return nil
		}
		out = append(out, Text(p, string(b), secrets...)...)
		return nil
	})
	if walkErr != nil {
		errs = append(errs, walkErr)
	}
	return out, errors.Join(errs...)
}

// Text scans one text; name labels the findings.
func Text(name, text string, secrets ...string) []Finding {
	needles := searchTerms(secrets)
	var out []Finding
	lines := strings.Split(text, "\n")
	for n, line := range lines {
		if line == "" {
			continue
		}
		out = append(out, scanLine(name, n+1, line, needles)...)
	}
	// Base64 wrapped over several lines (PEM bodies, MIME) decodes only
	// when joined.
	for _, m := range wrappedBase64.FindAllStringIndex(text, -1) {
		joined := strings.Join(strings.Fields(text[m[0]:m[1]]), "")
		out = append(out, scanLine(name, lineAt(text, m[0]), joined, needles)...)
	}
	if f, ok := shape(name, text); ok {
		out = append(out, f)
	}
	return dedupe(out)
}

// needle is one string searched for: a secret, or one line of a multi-line
// secret (a PEM key shows up line by line).
type needle struct {
	index int // 1-based index of the secret
	s     string
}

func searchTerms(secrets []string) []needle {
	var out []needle
	for i, s := range secrets {
		if s == "" {
			continue
		}
		if !strings.Contains(s, "\n") {
			out = append(out, needle{i + 1, s})
			continue
		}
		for _, l := range strings.Split(s, "\n") {
			l = strings.TrimSpace(l)
			// PEM armour lines are not secret; short lines match by chance.
			if len(l) >= 16 && !strings.HasPrefix(l, "-----") {
				out = append(out, needle{i + 1, l})
			}
		}
	}
	return out
}

const (
	maxDepth = 4
	maxViews = 256
)

// view is one decoding of a line and how it was reached.
type view struct {
	text, how string
	depth     int
}

func scanLine(name string, line int, text string, needles []needle) []Finding {
	if len(needles) == 0 {
		return nil
	}
	// A base64 run holds a value of n bytes only if it is at least 4n/3
	// characters long; shorter runs (most words) are not decoded.
	minRun := 1 << 30
	for _, n := range needles {
		minRun = min(minRun, max(4, 4*len(n.s)/3))
	}
	var out []Finding
	found := map[int]bool{}
	seen := map[string]bool{text: true}
	queue := []view{{text: text, how: "plain"}}
	for len(queue) > 0 && len(seen) <= maxViews {
		v := queue[0]
		queue = queue[1:]
		t := neutralizeMasks(v.text)
		for _, nd := range needles {
			if !found[nd.index] && strings.Contains(t, nd.s) {
				found[nd.index] = true
				out = append(out, Finding{File: name, Line: line, What: fmt.Sprintf("secret #%d (%s)", nd.index, v.how)})
			}
		}
		if v.depth >= maxDepth || len(found) == countSecrets(needles) {
			continue
		}
		for _, d := range decodings(v.text, minRun) {
			if seen[d.text] || len(seen) > maxViews {
				continue
			}
			seen[d.text] = true
			how := d.how
			if v.how != "plain" {
				how = v.how + " > " + d.how
			}
			next := view{text: d.text, how: how, depth: v.depth + 1}
			if d.binary {
				// Searched, not decoded further.
				next.depth = maxDepth
			}
			queue = append(queue, next)
		}
	}
	return out
}

func countSecrets(needles []needle) int {
	m := map[int]bool{}
	for _, n := range needles {
		m[n.index] = true
	}
	return len(m)
}

// maskForms are the redactor's mask as the file types carry it; a secret
// that happens to be part of the word "redacted" is not found in a mask.
var maskForms = strings.NewReplacer(redact.Mask, "\x00", "&lt;redacted&gt;", "\x00", `\u003credacted\u003e`, "\x00")

func neutralizeMasks(s string) string {
	if !strings.Contains(s, "redacted") {
		return s
	}
	return maskForms.Replace(s)
}

type decoding struct {
	text, how string
	binary    bool
}

// decodings returns every text s can be decoded into by one step.
func decodings(s string, minRun int) []decoding {
	var out []decoding
	add := func(t, how string) {
		if t != s {
			out = append(out, decoding{text: t, how: how})
		}
	}
	if strings.Contains(s, `\`) {
		add(unescapeBackslashes(s), "JSON/YAML-unescaped")
	}
	if strings.Contains(s, "%") {
		add(unescapeURL(s, false), "URL-unescaped")
		if strings.Contains(s, "+") {
			add(unescapeURL(s, true), "URL-query-unescaped")
		}
	}
	if strings.Contains(s, "&") {
		add(html.UnescapeString(s), "entity-unescaped")
	}
	if strings.Contains(s, "''") {
		add(strings.ReplaceAll(s, "''", "'"), "YAML-single-quote-unescaped")
	}
	for _, run := range base64Runs.FindAllString(s, -1) {
		if len(run) < minRun {
			continue
		}
		for _, d := range decodeRun(run) {
			if d != s {
				out = append(out, decoding{text: d, how: "base64-decoded", binary: !printable(d)})
			}
		}
	}
	return out
}

var (
	base64Runs    = regexp.MustCompile(`[A-Za-z0-9+/_-]{4,}={0,2}`)
	wrappedBase64 = regexp.MustCompile(`(?m)(?:^[ \t]*[A-Za-z0-9+/]{16,}={0,2}[ \t]*\n){2,}`)
)

// printable reports whether d reads as text (what escapes and further
// encodings can live in); binary decodings are searched but not decoded again.
func printable(d string) bool {
	if !utf8.ValidString(d) {
		return false
	}
	bad := 0
	for _, r := range d {
		if r < 0x20 && r != '\n' && r != '\t' && r != '\r' || r == utf8.RuneError || r == 0x7f {
			bad++
		}
	}
	return bad*20 <= len(d)
}

// decodeRun decodes a base64 run as the redactor does
// (redact.DecodeBase64Run: each of the four offsets, the alphabet its
// characters belong to); a run with characters of both alphabets is
// decoded a side of the odd characters at a time, where the redactor gives
// up, since a leak check must find what a mixed blob still carries.
func decodeRun(run string) []string {
	run = strings.TrimRight(run, "=")
	if !strings.ContainsAny(run, "+/") || !strings.ContainsAny(run, "-_") {
		return redact.DecodeBase64Run(run)
	}
	var out []string
	for _, part := range strings.FieldsFunc(run, func(r rune) bool { return r == '-' || r == '_' }) {
		if len(part) >= 4 {
			out = append(out, redact.DecodeBase64Run(part)...)
		}
	}
	return out
}

// unescapeBackslashes undoes one level of JSON or YAML double-quoted
// escaping, leaving what it does not recognise as it is.
func unescapeBackslashes(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		n := s[i+1]
		switch n {
		case '"', '\\', '/', '\'':
			b.WriteByte(n)
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'u', 'x':
			width := 4
			if n == 'x' {
				width = 2
			}
			if i+2+width <= len(s) {
				if r, err := strconv.ParseUint(s[i+2:i+2+width], 16, 32); err == nil {
					b.WriteRune(rune(r))
					i += 1 + width
					continue
				}
			}
			b.WriteByte(c)
			b.WriteByte(n)
		default:
			b.WriteByte(c)
			b.WriteByte(n)
		}
		i++
	}
	return b.String()
}

// unescapeURL decodes %XX escapes (and + as a space in a query), leaving
// malformed escapes as they are.
func unescapeURL(s string, query bool) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			v, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			b.WriteByte(byte(v))
			i += 2
		case c == '+' && query:
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// shape reports the first place where the redactor would still change the
// text: a secret shape it knows that is not masked yet. The excerpt comes
// from the redacted text, so it shows the shape and not the value.
func shape(name, text string) (Finding, bool) {
	// Masks escaped for XML, HTML or JSON are masks too.
	text = shapeMaskForms.Replace(text)
	red := redact.New().String(text)
	if red == text {
		return Finding{}, false
	}
	i := 0
	for i < len(text) && i < len(red) && text[i] == red[i] {
		i++
	}
	start := strings.LastIndexByte(red[:i], '\n') + 1
	end := strings.IndexByte(red[start:], '\n')
	if end < 0 {
		end = len(red) - start
	}
	excerpt := strings.TrimSpace(red[start : start+end])
	if len(excerpt) > 120 {
		excerpt = excerpt[:120] + "..."
	}
	return Finding{File: name, Line: lineAt(text, i), What: "unmasked secret shape; masked it reads: " + excerpt}, true
}

var shapeMaskForms = strings.NewReplacer("&lt;redacted&gt;", redact.Mask, `\u003credacted\u003e`, redact.Mask)

func lineAt(text string, pos int) int { return strings.Count(text[:pos], "\n") + 1 }

func dedupe(fs []Finding) []Finding {
	seen := map[Finding]bool{}
	out := fs[:0]
	for _, f := range fs {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}
