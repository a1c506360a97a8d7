// Package packages checks that the kapp-controller PackageInstalls a cluster
// role needs reach ReconcileSucceeded, mirrors them against TKG's
// ClusterBootstrap when that API exists, and installs a small self-contained
// package set for the local profile.
//
// The expected PackageInstalls come from config/packages/*.yaml, per role,
// with ${CLUSTER_NAME} and ${CLUSTER_NAMESPACE} placeholders for the names
// TKG derives from the cluster ("<cluster>-antrea").
package packages

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/tkg-e2e/harness/framework/strictjson"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// KnownRoles are the roles a package list may describe (the placement matrix columns).
var KnownRoles = []string{"management", "workload", "windows-workload"}

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
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("package list: %w", err)
	}
	return Parse(data, path)
}

// Parse decodes a package list from YAML, strictly; source names it in errors.
func Parse(data []byte, source string) (*List, error) {
	var shape listShape
	if err := strictjson.DecodeYAML(data, &shape, source); err != nil {
		return nil, err
	}
	l := &List{Name: shape.Name, Description: shape.Description, Roles: map[string][]Expected{}, Source: source}
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if l.Name == "" {
		add("%s: name is required", source)
	}
	if len(shape.Roles) == 0 {
		add("%s: roles is required (a list of PackageInstalls per role: %s)", source, strings.Join(KnownRoles, ", "))
	}
	for _, role := range slices.Sorted(maps.Keys(shape.Roles)) {
		if !slices.Contains(KnownRoles, role) {
			add("%s: roles: unknown key %q (known roles: %s)", source, role, strings.Join(KnownRoles, ", "))
			continue
		}
		seen := map[string]int{}
		for i, raw := range shape.Roles[role] {
			at := fmt.Sprintf("%s: roles.%s[%d]", source, role, i)
			var e Expected
			if err := strictjson.Decode(raw, &e, at); err != nil {
				errs = append(errs, err)
				continue
			}
			if e.Name != "" {
				at += " (" + e.Name + ")"
			}
			errs = append(errs, validate(e, at)...)
			key := string(e.location()) + "/" + e.Namespace + "/" + e.Name
			if j, dup := seen[key]; dup {
				add("%s: listed twice (also roles.%s[%d])", at, role, j)
			}
			seen[key] = i
			l.Roles[role] = append(l.Roles[role], e)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return l, nil
}

func validate(e Expected, at string) []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(at+": "+format, args...)) }
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
	return errs
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
