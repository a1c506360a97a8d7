package config

import (
	"strings"
	"testing"
)

func withProviderUpgrade(from, to string) func(string) string {
	return func(s string) string {
		return strings.Replace(s, "clusters:\n", "clusters:\n  providerUpgrade:\n    name: pum\n    namespace: pu\n  providerUpgradeWorkload:\n    name: puw\n", 1) +
			"\nproviderUpgrade:\n  from:\n    core: cluster-api:" + from + "\n    infrastructure:\n      - docker:" + from +
			"\n  to:\n    core: cluster-api:" + to + "\n    infrastructure:\n      - docker:" + to + "\n"
	}
}

// A clusterctl upgrade target that is not newer than what is installed,
// or a provider only one side names, is bad input found before anything
// runs, at its key and line.
func TestAProviderUpgradeTargetNotNewerIsAProblem(t *testing.T) {
	for _, to := range []string{"v1.13.0", "v1.12.3"} {
		_, ps := load(t, fixture(t, withProviderUpgrade("v1.13.0", to)), nil)
		for _, key := range []string{"providerUpgrade.to.core", "providerUpgrade.to.infrastructure[0]"} {
			if p := expectProblem(t, ps, key, "is not newer than providerUpgrade.from's"); p.Line == 0 {
				t.Errorf("no line for %v", p)
			}
		}
	}
	cfg, ps := load(t, fixture(t, withProviderUpgrade("v1.13.0", "v1.14.0")), nil)
	if ps != nil {
		t.Fatalf("v1.13.0 -> v1.14.0: %v", ps)
	}
	if RoleOf(IDProviderUpgrade) != "management" || RoleOf(IDProviderUpgradeWorkload) != "workload" {
		t.Errorf("roles %s %s", RoleOf(IDProviderUpgrade), RoleOf(IDProviderUpgradeWorkload))
	}
	if m, _ := cfg.ClusterOf(IDProviderUpgrade); m.Name != "pum" || m.KubernetesVersion != cfg.Clusters.Management.KubernetesVersion {
		t.Errorf("clusters.providerUpgrade did not inherit from management: %+v", m)
	}
	if ClusterKey(IDProviderUpgradeWorkload) != "clusters.providerUpgradeWorkload" {
		t.Errorf("key %s", ClusterKey(IDProviderUpgradeWorkload))
	}

	_, ps = load(t, fixture(t, func(s string) string {
		return strings.Replace(withProviderUpgrade("v1.13.0", "v1.14.0")(s), "      - docker:v1.14.0", "      - vsphere:v1.16.1\n      - docker", 1)
	}), nil)
	expectProblem(t, ps, "providerUpgrade.to.infrastructure[0]", "vsphere:v1.16.1 is not in providerUpgrade.from")
	expectProblem(t, ps, "providerUpgrade.to.infrastructure[1]", `"docker" is not name:version`)
	expectProblem(t, ps, "providerUpgrade.to", "infrastructure/docker is in providerUpgrade.from but not in to")

	_, ps = load(t, fixture(t, func(s string) string {
		return strings.Replace(withProviderUpgrade("v1.13.0", "v1.14.0")(s), "  providerUpgradeWorkload:\n    name: puw\n", "", 1)
	}), nil)
	expectProblem(t, ps, "clusters.providerUpgrade", "come together")

	_, ps = load(t, fixture(t, func(s string) string {
		return strings.Replace(withProviderUpgrade("v1.13.0", "v1.14.0")(s), "    namespace: pu\n", "", 1)
	}), nil)
	expectProblem(t, ps, "clusters.providerUpgrade.namespace", "clusterctl move moves every Cluster of a namespace")
}
