package assert

import (
	"fmt"
	"slices"
	"strings"
)

// The roles code refers to by name. The table below is what loaders accept;
// a constant is only a convenience for code that must name a role.
const (
	Management      = "management"
	Workload        = "workload"
	WindowsWorkload = "windows-workload"
)

// Roles is the registry of cluster roles a placement matrix or package list
// may describe, in column order. Adding a role is adding it here: the loaders
// validate their columns against this table and Run checks every target of a
// listed role. The bootstrap cluster is deliberately absent: it only exists
// to create the management cluster and nothing is asserted about it.
var Roles = []string{Management, Workload, WindowsWorkload}

// IsRole reports whether role is in the registry.
func IsRole(role string) bool { return slices.Contains(Roles, role) }

// RoleList joins roles for messages ("management, workload").
func RoleList(roles []string) string { return strings.Join(roles, ", ") }

// CheckRole returns an error naming the known roles when role is not one.
func CheckRole(role string) error {
	if IsRole(role) {
		return nil
	}
	return fmt.Errorf("unknown role %q (known roles: %s)", role, RoleList(Roles))
}
