// Package placement is the placement-matrix check of the assertion engine
// (framework/assert): which system pods run on a cluster, against a
// declarative matrix (config/placement/*.yaml) that says for each component
// and each cluster role whether it must run, must not run, may run, or must
// run on control-plane nodes only, and how healthy it has to be.
//
// The engine owns the roles (the matrix columns are validated against
// assert.Roles), the per-cluster loop, the waiting and the files; this
// package owns what only placement knows: matching pods to rows (owner
// references, not name prefixes), the verdict of a row (Evaluate, a pure
// function over pod and node lists, so every verdict is unit-testable), the
// logs worth fetching for a failing pod, and the matrix rendering (every row
// × every role, one column per checked cluster) in Markdown and HTML.
package placement

import "slices"

// Expectation is what a matrix cell says about a component on a role.
type Expectation string

const (
	// Must: at least one pod, and every pod passes the readiness rules.
	Must Expectation = "must"
	// MustNot: no pod at all (e.g. management-only controllers on a workload cluster).
	MustNot Expectation = "mustNot"
	// Optional: may be absent; when present its pods must pass the readiness rules.
	Optional Expectation = "optional"
	// ControlPlaneOnly: like Must, and every pod sits on a control-plane node.
	// Only for rows that really mean a node role (static pods): on a management
	// cluster the control plane is tainted, so controllers run on workers.
	ControlPlaneOnly Expectation = "controlPlaneOnly"
)

// Unlisted is the expectation of a report entry for a workload in a system
// namespace that no row describes: it has no placement rule, only the
// matrix's default readiness. A file cannot state it (knownExpectations
// leaves it out): a row that exists describes its pods.
const Unlisted Expectation = "unlisted"

var knownExpectations = []Expectation{Must, MustNot, Optional, ControlPlaneOnly}

// Matrix is one loaded placement file.
type Matrix struct {
	// Name identifies the matrix in reports ("tkg-vsphere", "local").
	Name string `json:"name"`
	// Description says where the rows come from.
	Description string `json:"description,omitempty"`
	// Roles are the columns (assert.Roles entries); every component states
	// an expectation for each.
	Roles []string `json:"roles"`
	// Defaults apply to components that leave a readiness rule unset, and
	// to the pods of system namespaces that no row describes.
	Defaults Defaults `json:"defaults,omitempty"`
	// SystemNamespaces are namespaces whose every pod is health-checked
	// although no row names them (SystemNamespaceList adds the others).
	SystemNamespaces []string `json:"systemNamespaces,omitempty"`
	// Components are the rows, in report order.
	Components []Component `json:"-"`

	// Source is the file the matrix was loaded from, for error messages.
	Source string `json:"-"`
}

// Defaults hold matrix-wide values.
type Defaults struct {
	Readiness Readiness `json:"readiness,omitempty"`
}

// Component is one row: a system component and where it may run.
type Component struct {
	Name string `json:"name"`
	// Namespace or Namespaces (exactly one of them): a component that moved
	// namespace between versions lists both, and either is accepted.
	Namespace  string   `json:"namespace,omitempty"`
	Namespaces []string `json:"namespaces,omitempty"`
	// Match says how to recognise the component's pods.
	Match Match `json:"match"`
	// Roles maps every role of the matrix to an expectation.
	Roles map[string]Expectation `json:"roles"`
	// Readiness overrides the matrix defaults for this component.
	Readiness Readiness `json:"readiness,omitempty"`
	// Note records why the row is as it is (the seed it comes from, a doubt).
	Note string `json:"note,omitempty"`
}

// Match selects a component's pods. Exactly one field is set. Owner-based
// matches are preferred: a name prefix like "cert-manager" also matches
// "cert-manager-webhook-...".
type Match struct {
	// NamePrefix matches pods whose name starts with it.
	NamePrefix string `json:"namePrefix,omitempty"`
	// Deployment matches pods owned by a ReplicaSet of this Deployment.
	Deployment string `json:"deployment,omitempty"`
	// DaemonSet matches pods owned by this DaemonSet.
	DaemonSet string `json:"daemonSet,omitempty"`
	// StatefulSet matches pods owned by this StatefulSet.
	StatefulSet string `json:"statefulSet,omitempty"`
	// StaticPod matches mirror pods named "<StaticPod>-<node name>".
	StaticPod string `json:"staticPod,omitempty"`
}

// Readiness are the health rules a present pod must pass.
type Readiness struct {
	// Ready requires the pod's Ready condition (default true).
	Ready *bool `json:"ready,omitempty"`
	// MaxRestarts is the restart budget per pod, summed over its containers.
	// Unset means no budget.
	MaxRestarts *int32 `json:"maxRestarts,omitempty"`
}

// NamespaceList returns the namespaces the component is accepted in.
func (c Component) NamespaceList() []string {
	if c.Namespace != "" {
		return []string{c.Namespace}
	}
	return c.Namespaces
}

// effectiveReadiness merges the component's rules over the matrix defaults.
func (m *Matrix) effectiveReadiness(c Component) (ready bool, maxRestarts *int32) {
	ready = true
	if m.Defaults.Readiness.Ready != nil {
		ready = *m.Defaults.Readiness.Ready
	}
	if c.Readiness.Ready != nil {
		ready = *c.Readiness.Ready
	}
	maxRestarts = m.Defaults.Readiness.MaxRestarts
	if c.Readiness.MaxRestarts != nil {
		maxRestarts = c.Readiness.MaxRestarts
	}
	return ready, maxRestarts
}

// HasRole reports whether the matrix declares the role.
func (m *Matrix) HasRole(r string) bool { return slices.Contains(m.Roles, r) }
