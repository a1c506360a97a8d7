package config

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Drivers: what makes the clusters of a run.
const (
	// DriverClusterctl is the harness's own path: kind, clusterctl, Cluster API.
	DriverClusterctl = "clusterctl"
	// DriverTanzu runs the user's tanzu CLI (tanzu management-cluster create,
	// tanzu cluster create), as TKG users do.
	DriverTanzu = "tanzu"
)

// Drivers lists the valid values of driver:.
var Drivers = []string{DriverClusterctl, DriverTanzu}

const (
	defaultTanzuVerbosity = 9
	defaultTanzuKillGrace = "30s"
)

// tanzuVariableRE is a TKG configuration variable name (the flat keys of
// the cluster configuration file).
var tanzuVariableRE = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// TanzuDerivedKeys are the cluster configuration variables the tanzu driver
// derives from the profile (clusters:, vsphere:). tanzu.configValues may not
// set them: two sources for one value drift apart, and the vCenter password
// must only come from vsphere.password.
var TanzuDerivedKeys = []string{"CLUSTER_NAME", "NAMESPACE", "VSPHERE_SERVER", "VSPHERE_USERNAME", "VSPHERE_PASSWORD"}

// UsesTanzu reports whether the tanzu CLI makes the run's clusters.
func (c *Config) UsesTanzu() bool { return c.Driver == DriverTanzu }

func (c *Config) defaultDriver() {
	if c.Driver == "" {
		c.Driver = DriverClusterctl
	}
	if c.Tanzu.Verbosity == 0 {
		c.Tanzu.Verbosity = defaultTanzuVerbosity
	}
	if c.Tanzu.KillGrace == "" {
		c.Tanzu.KillGrace = defaultTanzuKillGrace
	}
}

// resolveTanzuCLI fills an empty tanzu.cli from TANZU_CLI (the variable the
// issue and the stand-in tests use), and makes a relative path absolute
// against the file that set it; a bare name is left for PATH.
func (c *Config) resolveTanzuCLI(idx nodeIndex, lookupEnv lookupFunc) {
	if c.Tanzu.CLI == "" {
		if v, ok := lookupEnv("TANZU_CLI"); ok {
			c.Tanzu.CLI = v
		}
		return
	}
	if !strings.ContainsRune(c.Tanzu.CLI, '/') || filepath.IsAbs(c.Tanzu.CLI) {
		return
	}
	base := filepath.Dir(c.Source)
	if loc, ok := idx["tanzu.cli"]; ok && loc.file != "" {
		base = filepath.Dir(loc.file)
	}
	if abs, err := filepath.Abs(filepath.Join(base, c.Tanzu.CLI)); err == nil {
		c.Tanzu.CLI = abs
	}
}

// validateDriver checks driver: and, with driver: tanzu, the tanzu section.
// The section is not checked for the clusterctl driver, so a profile can
// carry both and switch with one key.
func (c *Config) validateDriver(idx nodeIndex) Problems {
	var probs Problems
	// A key the file does not set has no line: point at the driver key, or
	// at the file.
	at := func(key string) located {
		if l := idx.at(key); l.node != nil {
			return l
		}
		if l := idx.at("driver"); l.node != nil {
			return l
		}
		return located{file: c.Source}
	}
	add := func(key, msg, fix string) { probs = append(probs, at(key).problem(key, msg, fix)) }
	if !slices.Contains(Drivers, c.Driver) {
		add("driver", fmt.Sprintf("unknown driver %q", c.Driver), "use clusterctl (the default: the harness drives kind and clusterctl) or tanzu (the tanzu CLI; set tanzu.cli or TANZU_CLI)")
		return probs
	}
	if c.Driver != DriverTanzu {
		return probs
	}
	if len(c.Clusters.Workloads) > 0 {
		add("clusters.workloads", fmt.Sprintf("the tanzu driver makes one workload cluster; %d more are listed", len(c.Clusters.Workloads)),
			"remove clusters.workloads, or use driver: clusterctl for a run with several workload clusters")
	}
	t := c.Tanzu
	if p := checkTanzuCLI(t.CLI); p != "" {
		add("tanzu.cli", p, "export TANZU_CLI=/path/to/tanzu (or set tanzu.cli: ${TANZU_CLI}) to the tanzu binary; tests use the stand-in built from framework/tanzu/standin")
	}
	if t.Verbosity < 1 || t.Verbosity > 9 {
		add("tanzu.verbosity", fmt.Sprintf("%d is not a tanzu -v level", t.Verbosity), "use 9 (the default; the phase markers of the transcript need a high level)")
	}
	if d, err := time.ParseDuration(t.KillGrace); err != nil || d <= 0 {
		add("tanzu.killGrace", fmt.Sprintf("%q is not a positive duration", t.KillGrace), "write a Go duration, e.g. 30s")
	}
	for _, k := range slices.Sorted(maps.Keys(t.ConfigValues)) {
		key := "tanzu.configValues[" + k + "]"
		switch {
		case !tanzuVariableRE.MatchString(k):
			add(key, fmt.Sprintf("%q is not a TKG configuration variable name", k), "write it as TKG does, upper case with _, e.g. CLUSTER_PLAN")
		case slices.Contains(TanzuDerivedKeys, k):
			add(key, fmt.Sprintf("%s is derived from the profile", k), "remove it: the harness sets it from clusters: and vsphere:")
		case secretVariable(k):
			add(key, fmt.Sprintf("%s holds a secret; configValues are written and shown as they are", k), "give the vCenter password with vsphere.password (${VSPHERE_PASSWORD}) or vsphere.passwordFile")
		}
	}
	return probs
}

// checkTanzuCLI says what is wrong with the tanzu binary, or "".
func checkTanzuCLI(cli string) string {
	if cli == "" {
		return "driver: tanzu needs the tanzu binary, and neither tanzu.cli nor TANZU_CLI is set"
	}
	path := cli
	if !strings.ContainsRune(cli, '/') {
		p, err := exec.LookPath(cli)
		if err != nil {
			return fmt.Sprintf("%q is not in PATH (TANZU_CLI or tanzu.cli)", cli)
		}
		path = p
	}
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return fmt.Sprintf("the tanzu binary %s (TANZU_CLI or tanzu.cli): %v", path, unwrapPathErr(err))
	case st.IsDir():
		return fmt.Sprintf("the tanzu binary %s (TANZU_CLI or tanzu.cli) is a directory", path)
	case st.Mode()&0o111 == 0:
		return fmt.Sprintf("the tanzu binary %s (TANZU_CLI or tanzu.cli) is not executable", path)
	}
	return ""
}

// KillGraceDuration parses tanzu.killGrace (validated).
func (t Tanzu) KillGraceDuration() time.Duration { return mustDuration(t.KillGrace) }
