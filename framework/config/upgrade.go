package config

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
)

// validateUpgrade checks the upgrade stage's input before anything runs:
// a target that is a version newer than the cluster it upgrades (an equal
// or older one would "pass" without a single Machine replaced), bounds that
// are durations, and on vSphere a template for the target too.
func (c *Config) validateUpgrade(add func(key, msg, fix string)) {
	u := c.Upgrade
	for key, v := range map[string]string{"upgrade.apiOutageBound": u.APIOutageBound, "upgrade.serviceOutageBound": u.ServiceOutageBound,
		"upgrade.managementAPIOutageBound": u.ManagementAPIOutageBound} {
		if v != "" {
			checkPositiveDuration(add, key, v, "10s")
		}
	}
	if u.Cluster != "" && !slices.Contains(c.WorkloadIDs(), u.Cluster) {
		add("upgrade.cluster", fmt.Sprintf("%q is not a workload cluster of this profile (its workload clusters: %s)", u.Cluster, strings.Join(c.WorkloadIDs(), ", ")),
			"name one the workload stage makes (workload-2 is clusters.workloads[0]), or remove upgrade.cluster to let the upgrade stage make clusters.upgrade")
		return
	}
	id, from, _ := c.UpgradeTarget()
	if from == nil {
		return
	}
	key := ClusterKey(id)
	if u.KubernetesVersion == "" {
		add("upgrade.kubernetesVersion", key+" is the upgrade's cluster but there is no version to upgrade it to",
			"set upgrade.kubernetesVersion to the release under test, e.g. v1.33.1")
		return
	}
	if !k8sVersion.MatchString(u.KubernetesVersion) {
		add("upgrade.kubernetesVersion", fmt.Sprintf("%q is not a Kubernetes version", u.KubernetesVersion), "write it like v1.33.1")
		return
	}
	if newer, err := NewerVersion(u.KubernetesVersion, from.KubernetesVersion); err == nil && !newer {
		add("upgrade.kubernetesVersion", fmt.Sprintf("%s is not newer than %s.kubernetesVersion %s: nothing would be upgraded",
			u.KubernetesVersion, key, from.KubernetesVersion),
			"create "+key+" at the previous release (e.g. v1.32.5) and upgrade it to the release under test")
	}
	if c.UsesCAPV() {
		if _, ok := c.TemplateFor(u.KubernetesVersion); !ok {
			add("upgrade.kubernetesVersion", fmt.Sprintf("no OVA in ova.images has KUBERNETES_SEMVER %s: CAPV would have no template to roll the Machines to", u.KubernetesVersion),
				"add the node OVA of that version to ova.images")
		}
	}
}

// UpgradeTarget is the cluster the upgrade stage upgrades: the workload
// cluster upgrade.cluster names (made by the workload stage), else
// clusters.upgrade, which the stage makes itself (made). id is empty when
// the profile has neither; cl is nil when upgrade.cluster names no cluster
// of the profile (validate says so).
func (c *Config) UpgradeTarget() (id string, cl *WorkloadCluster, made bool) {
	if c.Upgrade.Cluster != "" {
		return c.Upgrade.Cluster, c.cluster(c.Upgrade.Cluster), false
	}
	if c.Clusters.Upgrade != nil {
		return IDUpgrade, c.Clusters.Upgrade, true
	}
	return "", nil, false
}

// NewerVersion reports whether Kubernetes version a is newer than b
// (build metadata such as +vmware.1 ignored).
func NewerVersion(a, b string) (bool, error) {
	va, err := semver.NewVersion(a)
	if err != nil {
		return false, fmt.Errorf("%q is not a version: %w", a, err)
	}
	vb, err := semver.NewVersion(b)
	if err != nil {
		return false, fmt.Errorf("%q is not a version: %w", b, err)
	}
	return va.GreaterThan(vb), nil
}

// OutageBounds are the upgrade's availability bounds (zero: unbounded, the
// outage is only reported).
func (u Upgrade) OutageBounds() (api, service time.Duration) {
	return mustDuration(u.APIOutageBound), mustDuration(u.ServiceOutageBound)
}

// ManagementOutageBound is the management-upgrade stage's API bound (zero:
// unbounded).
func (u Upgrade) ManagementOutageBound() time.Duration {
	return mustDuration(u.ManagementAPIOutageBound)
}
