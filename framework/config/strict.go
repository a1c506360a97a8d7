package config

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// nodeIndex maps a dotted key path to its value node and the file it came from,
// so that problems found after decoding still point at a file and line.
type nodeIndex map[string]located

type located struct {
	node *yaml.Node
	file string
	// kind is the Go kind the value decodes into.
	kind reflect.Kind
}

// checkKeys walks a YAML tree along the Go type it will decode into and
// reports every key the type does not have, with a suggestion when a known key
// is close. It records where every key sits in idx.
func checkKeys(file string, n *yaml.Node, t reflect.Type, path string, idx nodeIndex) Problems {
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
	var probs Problems
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			if n.Tag == "!!null" {
				return nil
			}
			return Problems{{File: file, Line: n.Line, Key: orRoot(path), Message: fmt.Sprintf("expected a mapping of keys, found %s", kindName(n)),
				Fix: "indent the keys under it, or remove the line"}}
		}
		fields := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := join(path, k.Value)
			ft, ok := fields[k.Value]
			if !ok {
				probs = append(probs, Problem{File: file, Line: k.Line, Key: p, Message: "unknown key" + suggest(k.Value, fields),
					Fix: fmt.Sprintf("remove it or rename it to one of: %s", strings.Join(slices.Sorted(maps.Keys(fields)), ", "))})
				continue
			}
			idx[p] = located{node: v, file: file}
			probs = append(probs, checkKeys(file, v, ft, p, idx)...)
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			if n.Tag == "!!null" {
				return nil
			}
			return Problems{{File: file, Line: n.Line, Key: orRoot(path), Message: fmt.Sprintf("expected a mapping, found %s", kindName(n))}}
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := fmt.Sprintf("%s[%s]", path, k.Value)
			idx[p] = located{node: v, file: file}
			probs = append(probs, checkKeys(file, v, t.Elem(), p, idx)...)
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			if n.Tag == "!!null" {
				return nil
			}
			return Problems{{File: file, Line: n.Line, Key: orRoot(path), Message: fmt.Sprintf("expected a list, found %s", kindName(n)),
				Fix: "write it as a YAML list (lines starting with \"- \")"}}
		}
		for i, v := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			idx[p] = located{node: v, file: file}
			probs = append(probs, checkKeys(file, v, t.Elem(), p, idx)...)
		}
	default:
		if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
			return Problems{{File: file, Line: n.Line, Key: orRoot(path), Message: fmt.Sprintf("expected a single value, found %s", kindName(n))}}
		}
	}
	return probs
}

func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name := strings.Split(f.Tag.Get("yaml"), ",")[0]
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

func orRoot(p string) string {
	if p == "" {
		return "(top level)"
	}
	return p
}

// suggest names the closest known key when the unknown one looks like a typo.
func suggest(key string, fields map[string]reflect.Type) string {
	best, bestD := "", 1<<30
	for k := range fields {
		d := distance(strings.ToLower(key), strings.ToLower(k))
		if d < bestD || (d == bestD && k < best) {
			best, bestD = k, d
		}
	}
	if best != "" && bestD <= 3 {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	// An abbreviation of a known key (workerCount -> workerMachineCount).
	for _, k := range slices.Sorted(maps.Keys(fields)) {
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
