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
