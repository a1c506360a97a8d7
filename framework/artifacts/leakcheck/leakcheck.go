// Package leakcheck finds secrets that reached text they should not reach:
// an artifacts folder, captured stdout. Tests, and the suite after a run, use
// it to prove the collectors and reports mask what they must. It looks for the given values in every
// rendering the redactor knows (plain, base64, JSON/XML/HTML-escaped, and
// base64 fragments of a value embedded in a larger blob), and for secret
// shapes (private keys, kubeconfig credentials, Secret data) that are not
// masked. A finding never contains the secret itself, so printing it in a
// test failure is safe.
package leakcheck

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

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

// Dir scans every regular file under root.
func Dir(root string, secrets ...string) ([]Finding, error) {
	var out []Finding
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		out = append(out, Text(filepath.ToSlash(rel), string(b), secrets...)...)
		return nil
	})
	return out, err
}

// Text scans one text; name labels the findings.
func Text(name, text string, secrets ...string) []Finding {
	var out []Finding
	for i, s := range secrets {
		for _, form := range redact.Forms(s) {
			for off := 0; ; {
				j := strings.Index(text[off:], form)
				if j < 0 {
					break
				}
				pos := off + j
				out = append(out, Finding{File: name, Line: lineAt(text, pos),
					What: fmt.Sprintf("secret #%d (%s form)", i+1, formKind(s, form))})
				off = pos + len(form)
			}
		}
	}
	if f, ok := shape(name, text); ok {
		out = append(out, f)
	}
	return out
}

// shape reports the first place where the redactor would still change the
// text: a secret shape it knows that is not masked yet. The excerpt comes
// from the redacted text, so it shows the shape and not the value.
func shape(name, text string) (Finding, bool) {
	// Masks escaped for XML, HTML or JSON are masks too.
	text = maskForms.Replace(text)
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

var maskForms = strings.NewReplacer("&lt;redacted&gt;", redact.Mask, `\u003credacted\u003e`, redact.Mask)

func lineAt(text string, pos int) int { return strings.Count(text[:pos], "\n") + 1 }

func formKind(v, form string) string {
	switch {
	case form == v:
		return "plain"
	case decodesTo(form, v):
		return "base64"
	case html.UnescapeString(form) == v || jsonUnquotes(form, v):
		return "escaped"
	}
	return "base64 fragment"
}

func decodesTo(form, v string) bool {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(form); err == nil && string(b) == v {
			return true
		}
	}
	return false
}

func jsonUnquotes(form, v string) bool {
	var s string
	return json.Unmarshal([]byte(`"`+form+`"`), &s) == nil && s == v
}
