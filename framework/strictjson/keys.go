package strictjson

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Problem is a key of a YAML tree that the Go type it decodes into does not
// have, or a value of the wrong shape (a list where a mapping belongs).
type Problem struct {
	Line int
	// Path is the dotted path of the key or value, "" for the top level.
	Path string
	// In is the path of the mapping an unknown key sits in; Path otherwise.
	In      string
	Message string
	// Fix says what to write instead; empty when the message says it.
	Fix string
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	yamlUnmarshaler = reflect.TypeFor[yaml.Unmarshaler]()
)

// CheckKeys walks a YAML tree along the Go type it will decode into, by the
// field names of struct tag tag ("yaml" or "json"), and reports every key the
// type does not have (naming the closest known key when it looks like a typo)
// and every value of the wrong shape. Decoders stop at the first of these and
// lose the line; a reader fixing a file wants all of them, with lines, in one
// pass. Values whose type decodes itself (json.RawMessage) are not entered.
func CheckKeys(n *yaml.Node, t reflect.Type, tag string) []Problem {
	return checkKeys(n, t, tag, "")
}

func checkKeys(n *yaml.Node, t reflect.Type, tag, path string) []Problem {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		n = n.Content[0]
	}
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if pt := reflect.PointerTo(t); pt.Implements(jsonUnmarshaler) || pt.Implements(yamlUnmarshaler) {
		return nil
	}
	shape := func(msg, fix string) []Problem {
		if n.Tag == "!!null" {
			return nil
		}
		return []Problem{{Line: n.Line, Path: path, In: path, Message: msg, Fix: fix}}
	}
	var probs []Problem
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return shape("expected a mapping of keys, found "+kindName(n), "indent the keys under it, or remove the line")
		}
		fields := Fields(t, tag)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := join(path, k.Value)
			ft, ok := fields[k.Value]
			if !ok {
				known := slices.Sorted(maps.Keys(fields))
				probs = append(probs, Problem{Line: k.Line, Path: p, In: path, Message: fmt.Sprintf("unknown key %q%s", k.Value, Suggest(k.Value, known)),
					Fix: "remove it or rename it to one of: " + strings.Join(known, ", ")})
				continue
			}
			probs = append(probs, checkKeys(v, ft, tag, p)...)
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return shape("expected a mapping, found "+kindName(n), "")
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			probs = append(probs, checkKeys(n.Content[i+1], t.Elem(), tag, fmt.Sprintf("%s[%s]", path, n.Content[i].Value))...)
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return shape("expected a list, found "+kindName(n), "write it as a YAML list (lines starting with \"- \")")
		}
		for i, v := range n.Content {
			probs = append(probs, checkKeys(v, t.Elem(), tag, fmt.Sprintf("%s[%d]", path, i))...)
		}
	default:
		if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
			return shape("expected a single value, found "+kindName(n), "")
		}
	}
	return probs
}

// Fields maps the keys of struct type t, named by struct tag tag, to their
// types. Untagged and unexported fields are not keys.
func Fields(t reflect.Type, tag string) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get(tag), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		out[name] = f.Type
	}
	return out
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	default:
		return fmt.Sprintf("the value %q", n.Value)
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// Suggest returns ` (did you mean "k"?)` naming the known key closest to key
// when key looks like a typo or an abbreviation of it, and "" otherwise.
func Suggest(key string, known []string) string {
	best, bestD := "", 1<<30
	for _, k := range known {
		d := distance(strings.ToLower(key), strings.ToLower(k))
		if d < bestD || (d == bestD && k < best) {
			best, bestD = k, d
		}
	}
	if best != "" && bestD <= 3 {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	// An abbreviation of a known key (workerCount -> workerMachineCount).
	for _, k := range slices.Sorted(slices.Values(known)) {
		if isSubsequence(strings.ToLower(key), strings.ToLower(k)) {
			return fmt.Sprintf(" (did you mean %q?)", k)
		}
	}
	return ""
}

// distance is the Levenshtein edit distance.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// isSubsequence reports whether every character of a appears in b in order.
func isSubsequence(a, b string) bool {
	i := 0
	for j := 0; i < len(a) && j < len(b); j++ {
		if a[i] == b[j] {
			i++
		}
	}
	return i == len(a)
}
