package redact

import (
	"regexp"
	"strings"
)

// A Kubernetes Secret keeps its values under data and stringData, as plain
// YAML or JSON keys that no shape pattern recognises. These rules mask those
// values in any text that holds a Secret object: a YAML dump, `kubectl get
// -o json`, a List of objects, and the last-applied-configuration annotation
// that repeats the whole Secret as escaped JSON. They work on text, not on
// parsed objects, so a document cut by a size cap or embedded in a log line
// is still masked, and they keep the keys so a reader still sees what the
// Secret holds. A document is treated as a Secret if it names the kind
// anywhere (kind may come after data, as it does in sorted dumps); masking a
// ConfigMap that shares a List with a Secret is the accepted cost.

var (
	secretKindRe = regexp.MustCompile(`kind\\?"?\s*:\s*\\?"?Secret\b`)
	docSepRe     = regexp.MustCompile(`(?m)^---[ \t]*$`)
	yamlDataRe   = regexp.MustCompile(`^(\s*)(- )?(data|stringData):[ \t]*(.*)$`)
	yamlKeyRe    = regexp.MustCompile(`^(\s*)("[^"]*"|'[^']*'|[^:#\s][^:]*?)[ \t]*:(?:\s|$)`)
	jsonDataRe   = regexp.MustCompile(`\\?"(?:data|stringData)\\?"\s*:\s*\{`)
	jsonKeyRe    = regexp.MustCompile(`\\?"([-._a-zA-Z0-9]+)\\?"\s*:`)
	jsonLineRe   = regexp.MustCompile(`^(\s*"[^"]*"\s*:\s*).*?(,?)\s*$`)
)

func maskSecretObjects(s string) string {
	if !secretKindRe.MatchString(s) {
		return s
	}
	seps := docSepRe.FindAllStringIndex(s, -1)
	var b strings.Builder
	b.Grow(len(s))
	start := 0
	for _, sep := range seps {
		b.WriteString(maskSecretDoc(s[start:sep[0]]))
		b.WriteString(s[sep[0]:sep[1]])
		start = sep[1]
	}
	b.WriteString(maskSecretDoc(s[start:]))
	return b.String()
}

func maskSecretDoc(doc string) string {
	if !secretKindRe.MatchString(doc) {
		return doc
	}
	lines := strings.Split(doc, "\n")
	out := make([]string, 0, len(lines))
	const (
		none = iota
		yamlBlock
		jsonBlock
	)
	mode, blockIndent, childIndent := none, 0, -1
	for _, line := range lines {
		switch mode {
		case yamlBlock:
			if strings.TrimSpace(line) == "" {
				out = append(out, line)
				continue
			}
			ind := indentOf(line)
			if ind > blockIndent {
				if childIndent < 0 {
					childIndent = ind
				}
				if ind == childIndent {
					if m := yamlKeyRe.FindStringSubmatch(line); m != nil {
						out = append(out, m[1]+m[2]+": "+Mask)
					} else {
						out = append(out, line[:ind]+Mask)
					}
				}
				// Deeper lines continue a block scalar value: dropped with it.
				continue
			}
			mode = none
		case jsonBlock:
			trimmed := strings.TrimSpace(line)
			if strings.HasPrefix(trimmed, "}") {
				mode = none
				break
			}
			if m := jsonLineRe.FindStringSubmatch(line); m != nil {
				out = append(out, m[1]+`"`+Mask+`"`+m[2])
			} else if trimmed != "" {
				out = append(out, line[:indentOf(line)]+`"`+Mask+`"`)
			} else {
				out = append(out, line)
			}
			continue
		}
		if mode == jsonBlock {
			out = append(out, line)
			continue
		}
		if m := yamlDataRe.FindStringSubmatch(line); m != nil {
			rest := strings.TrimSpace(m[4])
			switch {
			case rest == "" || strings.HasPrefix(rest, "#"):
				mode, blockIndent, childIndent = yamlBlock, len(m[1])+len(m[2]), -1
				out = append(out, line)
				continue
			case rest == "{}" || rest == "null" || rest == "~" || rest == Mask:
				out = append(out, line)
				continue
			default:
				// A flow mapping or a scalar: nothing of it is worth keeping.
				out = append(out, m[1]+m[2]+m[3]+": "+Mask)
				continue
			}
		}
		masked, open := maskJSONData(line)
		out = append(out, masked)
		if open {
			mode = jsonBlock
		}
	}
	return strings.Join(out, "\n")
}

// maskJSONData masks every data/stringData object on one line. open reports
// an object that starts on this line and continues on the next ones (pretty
// printed JSON), whose lines the caller masks until the closing brace.
func maskJSONData(line string) (string, bool) {
	var b strings.Builder
	pos := 0
	for {
		loc := jsonDataRe.FindStringIndex(line[pos:])
		if loc == nil {
			b.WriteString(line[pos:])
			return b.String(), false
		}
		open := pos + loc[1] - 1 // index of '{'
		b.WriteString(line[pos : open+1])
		quote := `"`
		if line[pos+loc[0]] == '\\' {
			quote = `\"`
		}
		end := matchingBrace(line, open)
		if end < 0 {
			rest := strings.TrimSpace(line[open+1:])
			if rest == "" {
				return b.String(), true
			}
			// Cut or malformed: mask everything that follows.
			b.WriteString(Mask)
			return b.String(), false
		}
		inner := line[open+1 : end]
		var parts []string
		for _, k := range jsonKeyRe.FindAllStringSubmatch(inner, -1) {
			parts = append(parts, quote+k[1]+quote+":"+quote+Mask+quote)
		}
		if len(parts) == 0 && strings.TrimSpace(inner) != "" {
			parts = append(parts, quote+Mask+quote)
		}
		b.WriteString(strings.Join(parts, ","))
		b.WriteString("}")
		pos = end + 1
	}
}

// matchingBrace ignores quoting on purpose: a brace inside a value can only
// make the masked span longer or send the rest of the line to the mask.
func matchingBrace(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

func indentOf(line string) int {
	return len(line) - len(strings.TrimLeft(line, " \t"))
}

// A size cap or a tail cut can leave half a private key: a BEGIN line without
// its END, or an END without its BEGIN, which the block pattern cannot match.
// The body next to such a lone marker is masked.
var (
	pemBeginRe = regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----`)
	pemEndRe   = regexp.MustCompile(`-----END [A-Z ]*PRIVATE KEY-----`)
)

func isPEMBody(c byte) bool {
	switch {
	case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("+/=\\ \t\r\n", c) >= 0
}

func maskOrphanPEM(s string) string {
	if !strings.Contains(s, "PRIVATE KEY-----") {
		return s
	}
	begins := pemBeginRe.FindAllStringIndex(s, -1)
	ends := pemEndRe.FindAllStringIndex(s, -1)
	type span struct{ from, to int }
	var spans []span
	// Pair markers in order; what stays unpaired is an orphan.
	bi, ei := 0, 0
	open := -1
	for bi < len(begins) || ei < len(ends) {
		if ei >= len(ends) || (bi < len(begins) && begins[bi][0] < ends[ei][0]) {
			if open >= 0 {
				spans = append(spans, bodyAfter(s, begins[open][1]))
			}
			open = bi
			bi++
			continue
		}
		if open >= 0 {
			open = -1
		} else {
			spans = append(spans, bodyBefore(s, ends[ei][0]))
		}
		ei++
	}
	if open >= 0 {
		spans = append(spans, bodyAfter(s, begins[open][1]))
	}
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		if sp.from < last || sp.from >= sp.to {
			continue
		}
		if strings.TrimSpace(strings.ReplaceAll(s[sp.from:sp.to], `\n`, "")) == "" {
			continue
		}
		b.WriteString(s[last:sp.from])
		b.WriteString("\n" + Mask + "\n")
		last = sp.to
	}
	b.WriteString(s[last:])
	return b.String()
}

func bodyAfter(s string, from int) struct{ from, to int } {
	to := from
	for to < len(s) && isPEMBody(s[to]) {
		to++
	}
	return struct{ from, to int }{from, to}
}

func bodyBefore(s string, to int) struct{ from, to int } {
	from := to
	for from > 0 && isPEMBody(s[from-1]) {
		from--
	}
	return struct{ from, to int }{from, to}
}
