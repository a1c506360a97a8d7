package config

import (
	"fmt"
	"os"
	"sort"
	"strings"
)

// Secret is a string that never prints: fmt, %v, JSON and YAML all show a mask.
// Read it with Reveal where the value is really needed (the vCenter login).
type Secret string

const secretMask = "<redacted>"

// Reveal returns the value.
func (s Secret) Reveal() string { return string(s) }

// String masks.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return secretMask
}

// GoString masks (%#v).
func (s Secret) GoString() string { return s.String() }

// MarshalJSON masks.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + s.String() + `"`), nil }

// MarshalYAML masks.
func (s Secret) MarshalYAML() (any, error) { return s.String(), nil }

// Secrets returns every secret value the config holds, for the redactor: the
// vCenter password (a field of type Secret, so no dump of a Config shows
// it) and variables whose names say they are secret.
func (c *Config) Secrets() []string {
	var out []string
	if c.VSphere.Password != "" {
		out = append(out, c.VSphere.Password.Reveal())
	}
	// Variables reach clusterctl and its templates: a secret one is masked too.
	names := make([]string, 0, len(c.Variables))
	for name := range c.Variables {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if v := c.Variables[name]; v != "" && secretVariable(name) {
			out = append(out, v)
		}
	}
	return out
}

// MinSecretLen is the shortest secret a config accepts: a shorter value
// matches ordinary text by chance, so masking it mangles logs and a leak
// scan cannot tell a leak from a coincidence.
const MinSecretLen = 8

// secretVariable reports whether a variables: name holds a secret by its
// name (VSPHERE_PASSWORD, GITHUB_TOKEN, AZURE_CLIENT_SECRET, ...).
func secretVariable(name string) bool {
	n := strings.ToUpper(name)
	return strings.Contains(n, "PASSWORD") || strings.Contains(n, "TOKEN") || strings.Contains(n, "SECRET")
}

// isSecretKey reports whether the value at a dotted config path is a secret,
// which a config file may only hold as a pure ${VAR} reference.
func isSecretKey(path string) bool {
	if path == "vsphere.password" {
		return true
	}
	name, ok := strings.CutPrefix(path, "variables.")
	return ok && secretVariable(name)
}

// literalSecretFix says how to give the secret at path without a literal.
func literalSecretFix(path string) string {
	if name, ok := strings.CutPrefix(path, "variables."); ok {
		return fmt.Sprintf("export %s in the environment (variables: may only hold %s: ${%s}); for the vCenter password, vsphere.passwordFile also works", name, name, name)
	}
	return "write it as ${VSPHERE_PASSWORD} and export that variable, or use vsphere.passwordFile"
}

// validateSecrets checks the secrets the config knows once they are read:
// each at least MinSecretLen characters, and a password file readable by
// its owner only. It never quotes a secret.
func (c *Config) validateSecrets(idx nodeIndex) Problems {
	var probs Problems
	add := func(key, msg, fix string) { probs = append(probs, idx.nearest(key, c.Source).problem(key, msg, fix)) }
	short := func(n int) string {
		return fmt.Sprintf("the secret is %d characters; at least %d are required, so that it can be masked in every log without masking ordinary words", n, MinSecretLen)
	}
	v := c.VSphere
	if v.PasswordFile != "" {
		if fi, err := os.Stat(v.PasswordFile); err == nil && fi.Mode().Perm()&0o077 != 0 {
			add("vsphere.passwordFile", fmt.Sprintf("the password file %s has mode %04o: other users can read the vCenter password", v.PasswordFile, fi.Mode().Perm()),
				fmt.Sprintf("chmod 600 %s", v.PasswordFile))
		}
	}
	if n := len(v.Password); n > 0 && n < MinSecretLen {
		switch {
		case v.PasswordFile != "":
			add("vsphere.passwordFile", "the vCenter password in the password file is too short: "+short(n), "use the real vCenter password; a test vCenter needs one of at least 8 characters too")
		default:
			add("vsphere.password", "the vCenter password (VSPHERE_PASSWORD) is too short: "+short(n), "export the real vCenter password; a test vCenter needs one of at least 8 characters too")
		}
	}
	names := make([]string, 0, len(c.Variables))
	for name := range c.Variables {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if n := len(c.Variables[name]); secretVariable(name) && n > 0 && n < MinSecretLen {
			add(fmt.Sprintf("variables[%s]", name), fmt.Sprintf("variable %s is too short: %s", name, short(n)),
				fmt.Sprintf("export a %s of at least %d characters", name, MinSecretLen))
		}
	}
	return probs
}
