package placement

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/tkg-e2e/harness/framework/strictjson"
	"maps"
	"os"
	"slices"
	"strings"
)

// fileShape is the YAML layout. Sections stay raw so that each is decoded
// strictly on its own and an unknown key is reported with its path.
type fileShape struct {
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	Roles       []Role            `json:"roles"`
	Defaults    json.RawMessage   `json:"defaults,omitempty"`
	Components  []json.RawMessage `json:"components"`
}

type componentShape struct {
	Name       string               `json:"name"`
	Namespace  string               `json:"namespace,omitempty"`
	Namespaces []string             `json:"namespaces,omitempty"`
	Match      json.RawMessage      `json:"match"`
	Roles      map[Role]Expectation `json:"roles"`
	Readiness  json.RawMessage      `json:"readiness,omitempty"`
	Note       string               `json:"note,omitempty"`
}

type defaultsShape struct {
	Readiness json.RawMessage `json:"readiness,omitempty"`
}

// Load reads and validates a matrix file. Every problem in the file is
// reported at once, each prefixed with the file name and the row.
func Load(path string) (*Matrix, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("placement matrix: %w", err)
	}
	return Parse(data, path)
}

// Parse decodes a matrix from YAML; source names it in errors.
func Parse(data []byte, source string) (*Matrix, error) {
	var shape fileShape
	if err := strictjson.DecodeYAML(data, &shape, source); err != nil {
		return nil, err
	}
	m := &Matrix{Name: shape.Name, Description: shape.Description, Roles: shape.Roles, Source: source}
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if m.Name == "" {
		add("%s: name is required (e.g. name: local)", source)
	}
	if len(m.Roles) == 0 {
		add("%s: roles is required (the columns, some of %s)", source, roleList(KnownRoles))
	}
	for i, r := range m.Roles {
		if !slices.Contains(KnownRoles, r) {
			add("%s: roles[%d]: unknown role %q (known roles: %s)", source, i, r, roleList(KnownRoles))
		} else if slices.Index(m.Roles, r) != i {
			add("%s: roles[%d]: role %q listed twice", source, i, r)
		}
	}

	var defaults defaultsShape
	if err := strictjson.Decode(shape.Defaults, &defaults, source+": defaults"); err != nil {
		errs = append(errs, err)
	} else if err := strictjson.Decode(defaults.Readiness, &m.Defaults.Readiness, source+": defaults.readiness"); err != nil {
		errs = append(errs, err)
	} else if err := checkReadiness(m.Defaults.Readiness); err != nil {
		add("%s: defaults.readiness: %v", source, err)
	}

	if len(shape.Components) == 0 {
		add("%s: components is empty: a matrix without rows checks nothing", source)
	}
	seen := map[string]int{}
	for i, raw := range shape.Components {
		c, cerrs := parseComponent(raw, fmt.Sprintf("%s: components[%d]", source, i), m.Roles)
		errs = append(errs, cerrs...)
		if c.Name != "" {
			if j, dup := seen[c.Name]; dup {
				add("%s: components[%d]: name %q already used by components[%d]", source, i, c.Name, j)
			}
			seen[c.Name] = i
		}
		m.Components = append(m.Components, c)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return m, nil
}

func parseComponent(raw json.RawMessage, at string, roles []Role) (Component, []error) {
	var s componentShape
	if err := strictjson.Decode(raw, &s, at); err != nil {
		return Component{}, []error{err}
	}
	if s.Name != "" {
		at = fmt.Sprintf("%s (%s)", at, s.Name)
	}
	c := Component{Name: s.Name, Namespace: s.Namespace, Namespaces: s.Namespaces, Roles: s.Roles, Note: s.Note}
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(at+": "+format, args...)) }

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

	if len(s.Match) == 0 {
		add("match is required (one of: %s)", strings.Join(strictjson.KnownKeys(&Match{}), ", "))
	} else if err := strictjson.Decode(s.Match, &c.Match, at+".match"); err != nil {
		errs = append(errs, err)
	} else if n := c.Match.setFields(); n != 1 {
		add("match: set exactly one of %s (got %d)", strings.Join(strictjson.KnownKeys(&Match{}), ", "), n)
	}

	if err := strictjson.Decode(s.Readiness, &c.Readiness, at+".readiness"); err != nil {
		errs = append(errs, err)
	} else if err := checkReadiness(c.Readiness); err != nil {
		add("readiness: %v", err)
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
			add("roles: unknown key %q (the matrix declares roles %s)", r, roleList(roles))
		}
	}
	return c, errs
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

func checkReadiness(r Readiness) error {
	if r.MaxRestarts != nil && *r.MaxRestarts < 0 {
		return fmt.Errorf("maxRestarts must be >= 0, got %d", *r.MaxRestarts)
	}
	return nil
}

func roleList(rs []Role) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = string(r)
	}
	return strings.Join(s, ", ")
}

func expectationList() string {
	s := make([]string, len(knownExpectations))
	for i, e := range knownExpectations {
		s[i] = string(e)
	}
	return strings.Join(s, ", ")
}
