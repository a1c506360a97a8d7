package config

import (
	"regexp"
	"strings"
)

// varRef matches ${NAME} and ${NAME:-default}.
var varRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// lookupFunc returns a variable's value and whether it is set.
type lookupFunc func(name string) (string, bool)

// expand replaces variable references in s. As in the shell, ${NAME:-default}
// takes the default when NAME is unset or empty (CLEANUP_SELF_HOSTED= make e2e
// means "the profile's choice", not an empty value). It returns the names of
// variables that were referenced without a default and are not set.
func expand(s string, lookup lookupFunc) (string, []string) {
	var missing []string
	out := varRef.ReplaceAllStringFunc(s, func(m string) string {
		sub := varRef.FindStringSubmatch(m)
		name, hasDefault, def := sub[1], sub[2] != "", sub[3]
		if v, ok := lookup(name); ok && (v != "" || !hasDefault) {
			return v
		}
		if hasDefault {
			return def
		}
		missing = append(missing, name)
		return ""
	})
	return out, missing
}

// isPureRef reports whether s is exactly one ${NAME} reference (or
// ${NAME:-} with an empty default: optional, still no literal), the only
// form a secret may take inside a config file.
func isPureRef(s string) bool {
	s = strings.TrimSpace(s)
	m := varRef.FindStringSubmatch(s)
	return m != nil && m[0] == s && m[3] == ""
}
