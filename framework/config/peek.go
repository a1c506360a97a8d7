package config

import (
	"os"

	"go.yaml.in/yaml/v3"
)

// Peeked is what Peek reads of a config before it is loaded.
type Peeked struct {
	// Profile is "" when no file sets it (or none is readable): the real
	// load reports why.
	Profile string
	// Driver is clusterctl when no file sets it; it is read as written
	// (NewEnv checks the loaded config agrees).
	Driver string
}

// Peek returns the profile and driver keys of a config and its overrides
// (for each, the last file that sets it wins) without loading or
// validating anything, for code that must know them before the config is
// loaded: the Ginkgo tree, built first, declares which stages need which
// on the profile and binds each stage's spec for the driver.
func Peek(path string, overrides []string) Peeked {
	out := Peeked{Driver: DriverClusterctl}
	for _, p := range append([]string{path}, overrides...) {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// Each key decoded on its own: a malformed one does not hide the other.
		var doc map[string]yaml.Node
		if yaml.Unmarshal(b, &doc) != nil {
			continue
		}
		for key, into := range map[string]*string{"profile": &out.Profile, "driver": &out.Driver} {
			var v string
			if n, ok := doc[key]; ok && n.Decode(&v) == nil && v != "" {
				*into = v
			}
		}
	}
	return out
}

// PeekProfile is Peek's profile.
func PeekProfile(path string, overrides []string) string { return Peek(path, overrides).Profile }

// PeekDriver is Peek's driver.
func PeekDriver(path string, overrides []string) string { return Peek(path, overrides).Driver }
