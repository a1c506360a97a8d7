// Package packages is the PackageInstall check of the assertion engine
// (framework/assert): the kapp-controller PackageInstalls a cluster role
// needs must reach ReconcileSucceeded (with the expected package and
// version), and where TKG's ClusterBootstrap CRD exists, the cluster's
// ClusterBootstrap must mirror them. It also installs a small self-contained
// package set for the local profile.
//
// The expected PackageInstalls come from config/packages/*.yaml, per role
// (validated against assert.Roles), with ${CLUSTER_NAME} and
// ${CLUSTER_NAMESPACE} placeholders for the names TKG derives from the
// cluster ("<cluster>-antrea"). The engine owns the per-cluster loop, the
// waiting and the files; this package owns reading a PackageInstall's status
// (Interpret), judging it, and the report that quotes usefulErrorMessage (or
// the condition message when kapp-controller left it empty).
package packages

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/tkg-e2e/harness/framework/assert"
)

// Location says which cluster holds a PackageInstall.
type Location string

const (
	// OnSelf: the cluster under test (default).
	OnSelf Location = "self"
	// OnManagement: the management cluster. TKG installs a workload cluster's
	// kapp-controller from the management cluster, so that PackageInstall lives
	// there, in the workload cluster's namespace (seed 000: "in namespace: 'default'").
	OnManagement Location = "management"
)

// Expected is one PackageInstall that must reconcile.
type Expected struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	// PackageRef, when set, must equal spec.packageRef.refName.
	PackageRef string `json:"packageRef,omitempty"`
	// Version, when set, is a semver constraint (">=1.7.2", "~1.7") that
	// status.version must satisfy; build metadata (+vmware.1-tkg.1) is ignored.
	Version string `json:"version,omitempty"`
	// Location says which cluster holds the PackageInstall (self or
	// management). The YAML key is not "on": YAML 1.1 reads a bare on as true.
	Location Location `json:"location,omitempty"`
	// Optional entries may be absent; when present they must reconcile.
	Optional bool `json:"optional,omitempty"`
	// Note records where the entry comes from.
	Note string `json:"note,omitempty"`
}

// List is one loaded package file.
type List struct {
	Name        string                `json:"name"`
	Description string                `json:"description,omitempty"`
	Roles       map[string][]Expected `json:"roles"`
	Source      string                `json:"-"`
}

// Placeholders are the variables entries may use; any other ${...} is an error.
var Placeholders = []string{"CLUSTER_NAME", "CLUSTER_NAMESPACE"}

var placeholderRE = regexp.MustCompile(`\$\{([^}]*)\}`)

type listShape struct {
	Name        string                       `json:"name"`
	Description string                       `json:"description,omitempty"`
	Roles       map[string][]json.RawMessage `json:"roles"`
}

// Load reads and validates a package list file.
func Load(path string) (*List, error) {
	return assert.Load(path, "package list", Parse)
}

// Parse decodes a package list from YAML, strictly; source names it in errors.
func Parse(data []byte, source string) (*List, error) {
	return assert.Parse(data, source, func(shape *listShape, p *assert.Problems) *List {
		l := &List{Name: shape.Name, Description: shape.Description, Roles: map[string][]Expected{}, Source: source}
		if l.Name == "" {
			p.Add(source, "name is required")
		}
		if len(shape.Roles) == 0 {
			p.Add(source, "roles is required (a list of PackageInstalls per role: %s)", assert.RoleList(assert.Roles))
		}
		for _, role := range slices.Sorted(maps.Keys(shape.Roles)) {
			if !assert.IsRole(role) {
				p.Add(source, "roles: unknown key %q (known roles: %s)", role, assert.RoleList(assert.Roles))
				continue
			}
			seen := map[string]int{}
			for i, raw := range shape.Roles[role] {
				at := fmt.Sprintf("%s: roles.%s[%d]", source, role, i)
				var e Expected
				if !p.Decode(raw, &e, at) {
					continue
				}
				if e.Name != "" {
					at += " (" + e.Name + ")"
				}
				validate(p, e, at)
				key := string(e.location()) + "/" + e.Namespace + "/" + e.Name
				if j, dup := seen[key]; dup {
					p.Add(at, "listed twice (also roles.%s[%d])", role, j)
				}
				seen[key] = i
				l.Roles[role] = append(l.Roles[role], e)
			}
		}
		return l
	})
}

func validate(p *assert.Problems, e Expected, at string) {
	add := func(format string, args ...any) { p.Add(at, format, args...) }
	if e.Name == "" {
		add("name is required")
	}
	if e.Namespace == "" {
		add("namespace is required")
	}
	if e.Location != "" && e.Location != OnSelf && e.Location != OnManagement {
		add("location: %q is not a location (use %s or %s)", e.Location, OnSelf, OnManagement)
	}
	if e.Version != "" {
		if _, err := semver.NewConstraint(e.Version); err != nil {
			add("version: %q is not a semver constraint (e.g. \">=1.7.2\"): %v", e.Version, err)
		}
	}
	for _, field := range []string{e.Name, e.Namespace, e.PackageRef} {
		for _, m := range placeholderRE.FindAllStringSubmatch(field, -1) {
			if !slices.Contains(Placeholders, m[1]) {
				add("unknown placeholder ${%s} in %q (known: %s)", m[1], field, strings.Join(Placeholders, ", "))
			}
		}
	}
}

func (e Expected) location() Location {
	if e.Location == "" {
		return OnSelf
	}
	return e.Location
}

// For returns the entries of a role with placeholders replaced by vars
// (CLUSTER_NAME, CLUSTER_NAMESPACE). A placeholder without a value is an
// error: a PackageInstall named "-antrea" would only ever be reported missing.
func (l *List) For(role string, vars map[string]string) ([]Expected, error) {
	entries, ok := l.Roles[role]
	if !ok {
		return nil, fmt.Errorf("package list %s (%s) has no entries for role %q (it has: %s)",
			l.Name, l.Source, role, strings.Join(slices.Sorted(maps.Keys(l.Roles)), ", "))
	}
	var errs []error
	out := make([]Expected, 0, len(entries))
	for _, e := range entries {
		expand := func(s string) string {
			return placeholderRE.ReplaceAllStringFunc(s, func(m string) string {
				name := m[2 : len(m)-1]
				v, ok := vars[name]
				if !ok || v == "" {
					errs = append(errs, fmt.Errorf("package list %s, role %s, entry %q: no value for ${%s}", l.Source, role, e.Name, name))
				}
				return v
			})
		}
		x := e
		x.Name, x.Namespace, x.PackageRef = expand(e.Name), expand(e.Namespace), expand(e.PackageRef)
		x.Location = e.location()
		out = append(out, x)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}
