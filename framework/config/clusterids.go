package config

import (
	"fmt"
	"strconv"
	"strings"
)

// A run's Cluster API clusters have IDs: "management", "workload" (the
// first workload cluster, clusters.workload), then "workload-2",
// "workload-3", ... for clusters.workloads in order. The ID names the
// cluster in the run state, the Env, its clusterctl config file and its
// per-cluster results; its role (RoleOf) says what it is checked as.
const (
	idManagement = "management"
	idWorkload   = "workload"
	// IDUpgrade is the upgrade stage's cluster (clusters.upgrade): a
	// workload cluster the workload stage does not make.
	IDUpgrade = "upgrade"
)

// ClusterIDs lists the run's Cluster API clusters, management first.
func (c *Config) ClusterIDs() []string {
	ids := append([]string{idManagement}, c.WorkloadIDs()...)
	if _, _, made := c.UpgradeTarget(); made {
		ids = append(ids, IDUpgrade)
	}
	if c.Clusters.ProviderUpgrade != nil {
		ids = append(ids, IDProviderUpgrade)
	}
	if c.Clusters.ProviderUpgradeWorkload != nil {
		ids = append(ids, IDProviderUpgradeWorkload)
	}
	return ids
}

// WorkloadIDs lists the run's workload clusters: "workload", then one
// "workload-<n>" per entry of clusters.workloads (n from 2).
func (c *Config) WorkloadIDs() []string {
	ids := []string{idWorkload}
	for i := range c.Clusters.Workloads {
		ids = append(ids, idWorkload+"-"+strconv.Itoa(i+2))
	}
	return ids
}

// RoleOf is the role of a cluster ID: "workload-2" is a workload cluster.
func RoleOf(id string) string {
	if _, ok := extraIndex(id); ok || id == IDUpgrade || id == IDProviderUpgradeWorkload {
		return idWorkload
	}
	if id == IDProviderUpgrade {
		return idManagement
	}
	return id
}

// IDOrder orders the IDs of one role: "workload" (0) before "workload-2"
// (1) before "workload-10" (9).
func IDOrder(id string) int {
	if i, ok := extraIndex(id); ok {
		return i + 1
	}
	return 0
}

// extraIndex is the index in clusters.workloads of "workload-<n>".
func extraIndex(id string) (int, bool) {
	rest, ok := strings.CutPrefix(id, idWorkload+"-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 2 {
		return 0, false
	}
	return n - 2, true
}

// ClusterKey is the config key of a cluster ID ("clusters.workloads[0]"
// for workload-2), for problems and messages.
func ClusterKey(id string) string {
	if i, ok := extraIndex(id); ok {
		return fmt.Sprintf("clusters.workloads[%d]", i)
	}
	switch id {
	case IDProviderUpgrade:
		return "clusters.providerUpgrade"
	case IDProviderUpgradeWorkload:
		return "clusters.providerUpgradeWorkload"
	}
	return "clusters." + id
}

// cluster is the configured cluster of an ID, nil for an unknown one.
func (c *Config) cluster(id string) *WorkloadCluster {
	switch id {
	case idManagement:
		return &c.Clusters.Management
	case idWorkload:
		return &c.Clusters.Workload
	case IDUpgrade:
		return c.Clusters.Upgrade
	case IDProviderUpgrade:
		return c.Clusters.ProviderUpgrade
	case IDProviderUpgradeWorkload:
		return c.Clusters.ProviderUpgradeWorkload
	}
	if i, ok := extraIndex(id); ok && i < len(c.Clusters.Workloads) {
		return &c.Clusters.Workloads[i]
	}
	return nil
}

// inherit fills what an extra workload cluster leaves unset from the first
// workload cluster: one more cluster is its name and what differs.
func (w *WorkloadCluster) inherit(first WorkloadCluster) {
	if w.Namespace == "" {
		w.Namespace = first.Namespace
	}
	if w.Flavor == "" {
		w.Flavor = first.Flavor
	}
	if w.KubernetesVersion == "" {
		w.KubernetesVersion = first.KubernetesVersion
	}
	if w.ControlPlaneMachineCount == 0 {
		w.ControlPlaneMachineCount = first.ControlPlaneMachineCount
	}
	if w.WorkerMachineCount == 0 {
		w.WorkerMachineCount = first.WorkerMachineCount
	}
	if w.TopologyVariables == nil {
		w.TopologyVariables = first.TopologyVariables
	}
}
