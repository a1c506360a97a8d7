package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The provider-upgrade stage's clusters: a management cluster it makes
// from the run's management cluster with the previous Cluster API release,
// and a workload cluster that one makes, the way ClusterctlUpgradeSpec
// sets them up. Neither is made by the day-one stages.
const (
	IDProviderUpgrade         = "provider-upgrade"
	IDProviderUpgradeWorkload = "provider-upgrade-workload"
)

// ProviderUpgrade configures the provider-upgrade stage: the providers its
// management cluster starts on (From) and is upgraded to with `clusterctl
// upgrade` (To), and the clusterctl repository that has both.
type ProviderUpgrade struct {
	// ClusterctlConfigPath is a clusterctl config whose repositories hold
	// the From and the To versions (offline: scripts/previous-capi-images.sh
	// writes one and exports CAPI_PREVIOUS_CLUSTERCTL_CONFIG). Empty: the
	// profile's clusterctl.configPath.
	ClusterctlConfigPath string           `yaml:"clusterctlConfigPath"`
	From                 ProviderVersions `yaml:"from"`
	To                   ProviderVersions `yaml:"to"`
	// Images are loaded into the stage's management cluster's nodes beside
	// the management role's (tryLoad: the From release's controllers; a
	// machine with registry access pulls them).
	Images []string `yaml:"images"`
}

// ProviderVersions are clusterctl providers, each name:version.
type ProviderVersions struct {
	Core           string   `yaml:"core"`
	Bootstrap      []string `yaml:"bootstrap"`
	ControlPlane   []string `yaml:"controlPlane"`
	Infrastructure []string `yaml:"infrastructure"`
}

// providerEntry is one provider of a ProviderVersions with its config key
// and its clusterctl type (the field it is in).
type providerEntry struct{ key, typ, value string }

// entries are the providers with their config keys, core first.
func (p ProviderVersions) entries(key string) []providerEntry {
	out := []providerEntry{{key + ".core", "core", p.Core}}
	for _, f := range []struct {
		name string
		list []string
	}{{"bootstrap", p.Bootstrap}, {"controlPlane", p.ControlPlane}, {"infrastructure", p.Infrastructure}} {
		for i, v := range f.list {
			out = append(out, providerEntry{fmt.Sprintf("%s.%s[%d]", key, f.name, i), f.name, v})
		}
	}
	return out
}

// ClusterctlConfigBase is the clusterctl config the run-local config of a
// cluster ID is made from: the provider-upgrade clusters read the
// repository that has the previous release too.
func (c *Config) ClusterctlConfigBase(id string) string {
	if (id == IDProviderUpgrade || id == IDProviderUpgradeWorkload) && c.ProviderUpgrade.ClusterctlConfigPath != "" {
		return c.ProviderUpgrade.ClusterctlConfigPath
	}
	return c.Clusterctl.ConfigPath
}

// validateProviderUpgrade checks, before anything runs, that the stage's
// two clusters come together and that every To provider is a From
// provider at a newer version: a target equal to or older than what is
// installed would "pass" with nothing upgraded. Whether the repository has
// both versions is the stage's preflight (the file may be built later).
func (c *Config) validateProviderUpgrade(add func(key, msg, fix string)) {
	pu, cl := c.ProviderUpgrade, c.Clusters
	if (cl.ProviderUpgrade == nil) != (cl.ProviderUpgradeWorkload == nil) {
		add("clusters.providerUpgrade", "clusters.providerUpgrade and clusters.providerUpgradeWorkload come together (the management cluster upgraded and the workload cluster it must still manage)",
			"set both, or neither")
	}
	if cl.ProviderUpgrade == nil {
		return
	}
	if cl.ProviderUpgrade.Namespace == cl.Management.Namespace {
		add("clusters.providerUpgrade.namespace", fmt.Sprintf("%q is the management cluster's namespace too: clusterctl move moves every Cluster of a namespace, "+
			"so moving this cluster into itself (management-upgrade) would move the run's management cluster with it", cl.ProviderUpgrade.Namespace),
			"give it a namespace of its own, e.g. tkg-e2e-pu")
	}
	from := map[string]string{}
	for _, e := range pu.From.entries("providerUpgrade.from") {
		if name, v, ok := providerVersion(add, e.key, e.value); ok {
			from[e.typ+"/"+name] = v
		}
	}
	if len(pu.From.Infrastructure) == 0 {
		add("providerUpgrade.from.infrastructure", "no infrastructure provider to start the management cluster on", "e.g. [docker:v1.13.0]")
	}
	seen := map[string]bool{}
	for _, e := range pu.To.entries("providerUpgrade.to") {
		name, v, ok := providerVersion(add, e.key, e.value)
		if !ok {
			continue
		}
		key := e.typ + "/" + name
		seen[key] = true
		was, ok := from[key]
		if !ok {
			add(e.key, fmt.Sprintf("%s is not in providerUpgrade.from: clusterctl upgrade upgrades the providers that are installed", e.value),
				"list the same providers in from and to, each at its own version")
			continue
		}
		if newer, err := NewerVersion(v, was); err == nil && !newer {
			add(e.key, fmt.Sprintf("%s is not newer than providerUpgrade.from's %s:%s: nothing would be upgraded", e.value, name, was),
				"start from the previous release (e.g. v1.13.0) and upgrade to the one under test (v1.14.0)")
		}
	}
	for _, key := range slices.Sorted(maps.Keys(from)) {
		if !seen[key] {
			add("providerUpgrade.to", fmt.Sprintf("%s is in providerUpgrade.from but not in to: it would stay at %s", key, from[key]),
				"give every provider of from its target version")
		}
	}
}

// providerVersion splits name:version and reports one without a semver version.
func providerVersion(add func(key, msg, fix string), key, v string) (string, string, bool) {
	name, version, _ := strings.Cut(v, ":")
	if name == "" || !k8sVersion.MatchString(version) {
		add(key, fmt.Sprintf("%q is not name:version", v), "write it like cluster-api:v1.13.0")
		return "", "", false
	}
	return name, version, true
}
