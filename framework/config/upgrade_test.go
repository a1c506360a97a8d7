package config

import (
	"strings"
	"testing"
)

func withUpgrade(from, to string) func(string) string {
	return func(s string) string {
		return strings.Replace(s, "clusters:\n", "clusters:\n  upgrade:\n    name: upg\n    kubernetesVersion: "+from+"\n", 1) +
			"\nupgrade:\n  kubernetesVersion: " + to + "\n  apiOutageBound: 10s\n  serviceOutageBound: 5s\n"
	}
}

// An upgrade target that is not newer than the cluster it upgrades is bad
// input, found before anything runs, at its line.
func TestAnUpgradeTargetNotNewerIsAProblem(t *testing.T) {
	for _, to := range []string{"v1.32.5", "v1.31.0"} {
		_, ps := load(t, fixture(t, withUpgrade("v1.32.5", to)), nil)
		p := expectProblem(t, ps, "upgrade.kubernetesVersion", to+" is not newer than clusters.upgrade.kubernetesVersion v1.32.5")
		if p.Line == 0 {
			t.Errorf("no line for %v", p)
		}
	}
	cfg, ps := load(t, fixture(t, withUpgrade("v1.32.5", "v1.33.1")), nil)
	if ps != nil {
		t.Fatalf("v1.32.5 -> v1.33.1: %v", ps)
	}
	// The upgrade cluster is a workload cluster of the run the workload
	// stage does not make, with what it leaves unset from clusters.workload.
	if ids := cfg.ClusterIDs(); ids[len(ids)-1] != IDUpgrade || RoleOf(IDUpgrade) != "workload" || strings.Contains(strings.Join(cfg.WorkloadIDs(), ","), IDUpgrade) {
		t.Errorf("ClusterIDs %v, WorkloadIDs %v", ids, cfg.WorkloadIDs())
	}
	if u, _ := cfg.ClusterOf(IDUpgrade); u.Namespace != cfg.Clusters.Workload.Namespace || u.WorkerMachineCount != cfg.Clusters.Workload.WorkerMachineCount {
		t.Errorf("clusters.upgrade did not inherit: %+v", u)
	}
	if api, svc := cfg.Upgrade.OutageBounds(); api.Seconds() != 10 || svc.Seconds() != 5 {
		t.Errorf("bounds %s %s", api, svc)
	}
}

func TestUpgradeBoundsMustBeDurations(t *testing.T) {
	_, ps := load(t, fixture(t, func(s string) string {
		return strings.Replace(withUpgrade("v1.32.5", "v1.33.1")(s), "apiOutageBound: 10s", "apiOutageBound: ten", 1)
	}), nil)
	expectProblem(t, ps, "upgrade.apiOutageBound", `"ten" is not a positive duration`)
}

// withUpgradeOf adds a second workload cluster at wl2Version and names it
// the upgrade's cluster (upgrade.cluster), beside the profile's
// clusters.upgrade, which it replaces.
func withUpgradeOf(id, wl2Version, to string) func(string) string {
	return func(s string) string {
		s = strings.Replace(withUpgrade("v1.32.5", to)(s), "clusters:\n", "clusters:\n  workloads:\n    - name: wl2\n      kubernetesVersion: "+wl2Version+"\n", 1)
		return strings.Replace(s, "\nupgrade:\n", "\nupgrade:\n  cluster: "+id+"\n", 1)
	}
}

// upgrade.cluster upgrades a workload cluster the workload stage makes:
// the stage makes no cluster of its own, and the version checks are that
// cluster's, named by its key.
func TestUpgradeClusterNamesAWorkloadClusterOfTheRun(t *testing.T) {
	cfg, ps := load(t, fixture(t, withUpgradeOf("workload-2", "v1.32.5", "v1.33.1")), nil)
	if ps != nil {
		t.Fatalf("workload-2 at v1.32.5 -> v1.33.1: %v", ps)
	}
	id, cl, made := cfg.UpgradeTarget()
	if id != "workload-2" || made || cl == nil || cl.KubernetesVersion != "v1.32.5" || cl.Name != "wl2" {
		t.Errorf("UpgradeTarget = %q, %+v, made %v; want workload-2 (wl2 at v1.32.5), not made", id, cl, made)
	}
	if ids := cfg.ClusterIDs(); strings.Join(ids, ",") != "management,workload,workload-2" {
		t.Errorf("ClusterIDs %v: clusters.upgrade is not made when upgrade.cluster is set", ids)
	}

	_, ps = load(t, fixture(t, withUpgradeOf("workload-3", "v1.32.5", "v1.33.1")), nil)
	if p := expectProblem(t, ps, "upgrade.cluster", `"workload-3" is not a workload cluster of this profile (its workload clusters: workload, workload-2)`, "remove upgrade.cluster"); p.Line == 0 {
		t.Errorf("no line for %v", p)
	}
	_, ps = load(t, fixture(t, withUpgradeOf("workload-2", "v1.33.1", "v1.33.1")), nil)
	expectProblem(t, ps, "upgrade.kubernetesVersion", "v1.33.1 is not newer than clusters.workloads[0].kubernetesVersion v1.33.1", "create clusters.workloads[0] at the previous release")

	cfg, _ = load(t, fixture(t, withUpgrade("v1.32.5", "v1.33.1")), nil)
	if id, cl, made := cfg.UpgradeTarget(); id != IDUpgrade || !made || cl != cfg.Clusters.Upgrade {
		t.Errorf("without upgrade.cluster: UpgradeTarget = %q, made %v", id, made)
	}
}
