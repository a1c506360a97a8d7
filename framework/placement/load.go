package placement

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/tkg-e2e/harness/framework/assert"
	"github.com/tkg-e2e/harness/framework/strictjson"
)

// fileShape is the YAML layout. Sections stay raw so that each is decoded
// strictly on its own and an unknown key is reported with its path.
type fileShape struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Roles       []string        `json:"roles"`
	Defaults    json.RawMessage `json:"defaults,omitempty"`
	// SystemNamespaces is read from the YAML tree (systemNamespaces), for
	// its lines; raw here so that decoding never stops at it.
	SystemNamespaces json.RawMessage   `json:"systemNamespaces,omitempty"`
	Components       []json.RawMessage `json:"components"`
}

type componentShape struct {
	Name       string                 `json:"name"`
	Namespace  string                 `json:"namespace,omitempty"`
	Namespaces []string               `json:"namespaces,omitempty"`
	Match      json.RawMessage        `json:"match"`
	Roles      map[string]Expectation `json:"roles"`
	Readiness  json.RawMessage        `json:"readiness,omitempty"`
	Note       string                 `json:"note,omitempty"`
}

type defaultsShape struct {
	Readiness json.RawMessage `json:"readiness,omitempty"`
}

// Load reads and validates a matrix file. Every problem in the file is
// reported at once, each prefixed with the file name and the row.
func Load(path string) (*Matrix, error) {
	return assert.Load(path, "placement matrix", Parse)
}

// Parse decodes a matrix from YAML; source names it in errors.
func Parse(data []byte, source string) (*Matrix, error) {
	return assert.Parse(data, source, func(shape *fileShape, p *assert.Problems) *Matrix {
		m := &Matrix{Name: shape.Name, Description: shape.Description, Roles: shape.Roles, Source: source}
		if m.Name == "" {
			p.Add(source, "name is required (e.g. name: local)")
		}
		if len(m.Roles) == 0 {
			p.Add(source, "roles is required (the columns, some of %s)", assert.RoleList(assert.Roles))
		}
		for i, r := range m.Roles {
			at := fmt.Sprintf("%s: roles[%d]", source, i)
			if p.Role(at, r) && slices.Index(m.Roles, r) != i {
				p.Add(at, "role %q listed twice", r)
			}
		}

		var defaults defaultsShape
		if p.Decode(shape.Defaults, &defaults, source+": defaults") &&
			p.Decode(defaults.Readiness, &m.Defaults.Readiness, source+": defaults.readiness") {
			checkReadiness(p, source+": defaults.readiness", m.Defaults.Readiness)
		}
		if len(shape.SystemNamespaces) > 0 {
			m.SystemNamespaces = parseSystemNamespaces(p, data, source)
		}

		if len(shape.Components) == 0 {
			p.Add(source, "components is empty: a matrix without rows checks nothing")
		}
		seen := map[string]int{}
		for i, raw := range shape.Components {
			c := parseComponent(p, raw, fmt.Sprintf("%s: components[%d]", source, i), m.Roles)
			if c.Name != "" {
				if j, dup := seen[c.Name]; dup {
					p.Add(fmt.Sprintf("%s: components[%d]", source, i), "name %q already used by components[%d]", c.Name, j)
				}
				seen[c.Name] = i
			}
			m.Components = append(m.Components, c)
		}
		return m
	})
}

func parseComponent(p *assert.Problems, raw json.RawMessage, at string, roles []string) Component {
	var s componentShape
	if !p.Decode(raw, &s, at) {
		return Component{}
	}
	if s.Name != "" {
		at = fmt.Sprintf("%s (%s)", at, s.Name)
	}
	c := Component{Name: s.Name, Namespace: s.Namespace, Namespaces: s.Namespaces, Roles: s.Roles, Note: s.Note}
	add := func(format string, args ...any) { p.Add(at, format, args...) }

	if c.Name == "" {
		add("name is required")
	}
	switch {
	case c.Namespace != "" && len(c.Namespaces) > 0:
		add("set namespace or namespaces, not both")
	case c.Namespace == "" && len(c.Namespaces) == 0:
		add("namespace (or namespaces, for a component that moved between versions) is required")
	}
	for i, ns := range c.Namespaces {
		if ns == "" {
			add("namespaces[%d] is empty", i)
		}
	}

	matchKeys := strings.Join(strictjson.KnownKeys(&Match{}), ", ")
	if len(s.Match) == 0 {
		add("match is required (one of: %s)", matchKeys)
	} else if p.Decode(s.Match, &c.Match, at+".match") {
		if n := c.Match.setFields(); n != 1 {
			add("match: set exactly one of %s (got %d)", matchKeys, n)
		}
	}

	if p.Decode(s.Readiness, &c.Readiness, at+".readiness") {
		checkReadiness(p, at+": readiness", c.Readiness)
	}

	// Every declared role must be stated: a forgotten cell would silently
	// check nothing.
	for _, r := range roles {
		e, ok := c.Roles[r]
		switch {
		case !ok:
			add("roles: no expectation for role %q (one of %s)", r, expectationList())
		case !slices.Contains(knownExpectations, e):
			add("roles.%s: unknown expectation %q (one of %s)", r, e, expectationList())
		}
	}
	for _, r := range slices.Sorted(maps.Keys(c.Roles)) {
		if !slices.Contains(roles, r) {
			add("roles: unknown key %q (the matrix declares roles %s)", r, assert.RoleList(roles))
		}
	}
	return c
}

func (m Match) setFields() int {
	n := 0
	for _, s := range []string{m.NamePrefix, m.Deployment, m.DaemonSet, m.StatefulSet, m.StaticPod} {
		if s != "" {
			n++
		}
	}
	return n
}

func checkReadiness(p *assert.Problems, at string, r Readiness) {
	if r.MaxRestarts != nil && *r.MaxRestarts < 0 {
		p.Add(at, "maxRestarts must be >= 0, got %d", *r.MaxRestarts)
	}
}

func expectationList() string {
	s := make([]string, len(knownExpectations))
	for i, e := range knownExpectations {
		s[i] = string(e)
	}
	return strings.Join(s, ", ")
}

// parseSystemNamespaces reads systemNamespaces from the YAML tree rather than
// from the decoded JSON, which has no lines: an empty or repeated name is only
// found after decoding, and the reader fixing it wants file:line.
func parseSystemNamespaces(p *assert.Problems, data []byte, source string) []string {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil // the strict decoder has accepted the file, so this does not happen
	}
	var list *yaml.Node
	for top, i := doc.Content[0], 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == "systemNamespaces" {
			list = resolve(top.Content[i+1])
		}
	}
	at := func(n *yaml.Node, path string) string { return fmt.Sprintf("%s:%d: %s", source, n.Line, path) }
	switch {
	case list == nil || list.Tag == "!!null":
		return nil
	case list.Kind != yaml.SequenceNode:
		p.Add(at(list, "systemNamespaces"), "want a list of namespaces, found %s (write e.g. systemNamespaces: [monitoring])", yamlValue(list))
		return nil
	}
	var out []string
	first := map[string]int{}
	for i, n := range list.Content {
		n, path := resolve(n), fmt.Sprintf("systemNamespaces[%d]", i)
		switch {
		case n.Tag == "!!null" || (n.Tag == "!!str" && n.Value == ""):
			p.Add(at(n, path), "empty namespace name (write the namespace, or remove the entry)")
		case n.Kind != yaml.ScalarNode:
			p.Add(at(n, path), "want a namespace name, found %s (write one name per entry, e.g. - monitoring)", yamlValue(n))
		case n.Tag != "!!str":
			p.Add(at(n, path), "want a namespace name, found %s (quote it if it really is the name)", yamlValue(n))
		case first[n.Value] > 0:
			p.Add(at(n, path), "namespace %q already listed on line %d (remove one)", n.Value, first[n.Value])
		default:
			if errs := validation.IsDNS1123Label(n.Value); len(errs) > 0 {
				p.Add(at(n, path), "%q is not a namespace name: %s", n.Value, strings.Join(errs, "; "))
			}
			first[n.Value] = n.Line
			out = append(out, n.Value)
		}
	}
	return out
}

func resolve(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode {
		return n.Alias
	}
	return n
}

// yamlValue names a YAML value the way a reader sees it in the file.
func yamlValue(n *yaml.Node) string {
	switch {
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Tag == "!!str":
		return fmt.Sprintf("the string %q", n.Value)
	default:
		return fmt.Sprintf("%s %s", strings.TrimPrefix(n.Tag, "!!"), n.Value)
	}
}
