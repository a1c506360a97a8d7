package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"html"
	"net/url"
	"strings"
)

// minEmbeddedLen is the shortest base64 fragment searched for inside larger
// base64 blobs. Shorter fragments would match random base64 by chance and
// mangle unrelated data; 12 characters come from secrets of 10 bytes or more.
// Shorter secrets inside a blob are found by decoding the blob (base64Runs).
const minEmbeddedLen = 12

// Forms returns every rendering of v that can carry it into an artifact:
// the value itself; its base64 encodings; the escaped forms that JSON (once
// and twice, as in a JSON string inside a JSON string), XML (JUnit), HTML
// (index.html), URLs (query and path escaping) and YAML (single-quoted, with
// ' doubled; double-quoted, with \ and " escaped) writers produce, which a
// plain match would miss for a password holding &, <, >, %, \ or quotes; and
// the fragments of its base64 form that stay the same wherever it sits inside
// a larger base64 blob (a kubeconfig or cloud-init userdata that contains
// it), for each of the three byte alignments. Every value but the empty one
// has forms, however short: a password is masked whatever its length.
func Forms(v string) []string {
	if v == "" {
		return nil
	}
	b := []byte(v)
	out := []string{
		v,
		base64.StdEncoding.EncodeToString(b),
		base64.RawStdEncoding.EncodeToString(b),
		base64.URLEncoding.EncodeToString(b),
		base64.RawURLEncoding.EncodeToString(b),
		xmlEscaped(v),
		html.EscapeString(v),
		url.QueryEscape(v),
		url.PathEscape(v),
		strings.ReplaceAll(v, "'", "''"), // YAML single-quoted
	}
	for _, escapeHTML := range []bool{true, false} {
		once := jsonEscaped(v, escapeHTML) // also YAML double-quoted
		out = append(out, once, jsonEscaped(once, escapeHTML), jsonEscaped(once, !escapeHTML))
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for align := 0; align < 3; align++ {
			if frag := embeddedFragment(enc, b, align); len(frag) >= minEmbeddedLen {
				out = append(out, frag)
			}
		}
	}
	seen := map[string]bool{}
	uniq := out[:0]
	for _, f := range out {
		if f != "" && !seen[f] {
			seen[f] = true
			uniq = append(uniq, f)
		}
	}
	return uniq
}

func jsonEscaped(v string, escapeHTML bool) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(v); err != nil {
		return v
	}
	s := strings.TrimSuffix(buf.String(), "\n")
	return strings.TrimSuffix(strings.TrimPrefix(s, `"`), `"`)
}

func xmlEscaped(v string) string {
	var buf bytes.Buffer
	if err := xml.EscapeText(&buf, []byte(v)); err != nil {
		return v
	}
	return buf.String()
}

// embeddedFragment encodes v as if preceded by align bytes and keeps only
// the characters whose 6 bits all come from v, so the fragment is the same
// whatever bytes surround v in the blob.
func embeddedFragment(enc *base64.Encoding, v []byte, align int) string {
	padded := append(make([]byte, align), v...)
	s := enc.WithPadding(base64.NoPadding).EncodeToString(padded)
	startBit, endBit := 8*align, 8*len(padded)
	first := (startBit + 5) / 6
	last := endBit / 6 // exclusive
	if last > len(s) {
		last = len(s)
	}
	if first >= last {
		return ""
	}
	return s[first:last]
}
