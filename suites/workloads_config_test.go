package suites_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/suites/lifecycle"
)

// loadLocal loads the shipped local profile with overrides, the cluster
// name variables unset.
func loadLocal(t *testing.T, overrides ...string) (*config.Config, error) {
	t.Helper()
	for _, v := range []string{"KIND_CLUSTER_NAME", "MANAGEMENT_CLUSTER_NAME", "WORKLOAD_CLUSTER_NAME", "WORKLOAD2_CLUSTER_NAME", "UNIQUE_CLUSTER_NAMES"} {
		t.Setenv(v, "")
		os.Unsetenv(v) // restored after the test
	}
	return config.Load(config.LoadOptions{Path: "../config/local.yaml", Overrides: overrides, Intervals: lifecycle.Registry.IntervalKeys(),
		DriverIntervals: lifecycle.Registry.DriverIntervalKeys()})
}

// A second workload cluster is one more entry: it gets the next ID, the
// first workload cluster's settings it leaves unset, its own name with the
// run's short ID, and its own clusterctl variables.
func TestASecondWorkloadClusterIsOneMoreEntry(t *testing.T) {
	cfg, err := loadLocal(t, "../config/two-workloads.overrides.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// The local profile's day-two clusters come last: the workload stage
	// does not make them (WorkloadIDs).
	if got := cfg.ClusterIDs(); !slices.Equal(got, []string{"management", "workload", "workload-2", "upgrade", "provider-upgrade", "provider-upgrade-workload"}) {
		t.Fatalf("ClusterIDs = %v", got)
	}
	if got := cfg.WorkloadIDs(); !slices.Equal(got, []string{"workload", "workload-2"}) {
		t.Fatalf("WorkloadIDs = %v", got)
	}
	wl2, ok := cfg.ClusterOf("workload-2")
	first := cfg.Clusters.Workload
	if !ok || wl2.Name != "tkg-e2e-wl2" || wl2.Namespace != first.Namespace || wl2.Flavor != first.Flavor ||
		wl2.KubernetesVersion != first.KubernetesVersion || wl2.ControlPlaneMachineCount != first.ControlPlaneMachineCount ||
		wl2.WorkerMachineCount != first.WorkerMachineCount {
		t.Fatalf("workload-2 = %+v, want the first workload cluster's settings (%+v) under its own name", wl2, first)
	}
	if config.RoleOf("workload-2") != "workload" || config.RoleOf("management") != "management" || config.RoleOf("workload-x") != "workload-x" {
		t.Error("RoleOf: workload-2 is a workload cluster; nothing else is")
	}
	if err := cfg.SetRunNames("k3f9a", map[string]string{"workload-2": "tkg-e2e-wl2-kept1"}); err != nil {
		t.Fatal(err)
	}
	if wl2, _ := cfg.ClusterOf("workload-2"); wl2.Name != "tkg-e2e-wl2-kept1" || cfg.Clusters.Workload.Name != "tkg-e2e-wl-k3f9a" {
		t.Errorf("run names: workload-2 %s (kept), workload %s", wl2.Name, cfg.Clusters.Workload.Name)
	}
}

// A second workload cluster's mistakes are reported at its own entry.
func TestASecondWorkloadClustersProblemsNameItsEntry(t *testing.T) {
	dir := t.TempDir()
	over := filepath.Join(dir, "more.yaml")
	if err := os.WriteFile(over, []byte("clusters:\n  workloads:\n    - name: ${WORKLOAD_CLUSTER_NAME:-tkg-e2e-wl}\n    - name: Bad_Name\n      kubernetesVersion: 1.33\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := loadLocal(t, over)
	for _, want := range []string{"clusters.workloads[0].name: \"tkg-e2e-wl\" is also the workload cluster's name",
		"clusters.workloads[1].name: \"Bad_Name\" is not a valid cluster name", "clusters.workloads[1].kubernetesVersion: \"1.33\" is not a Kubernetes version",
		"more.yaml:"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q:\n%v", want, err)
		}
	}
}

// The tanzu driver makes one workload cluster: a second one is a config
// problem, before anything starts, not a run that silently makes one.
func TestTheTanzuDriverRefusesASecondWorkloadCluster(t *testing.T) {
	_, err := loadLocal(t, "../config/tanzu-standin.overrides.yaml", "../config/two-workloads.overrides.yaml")
	if err == nil || !strings.Contains(err.Error(), "clusters.workloads: the tanzu driver makes one workload cluster; 1 more are listed") {
		t.Fatalf("the error does not refuse the second workload cluster:\n%v", err)
	}
}
