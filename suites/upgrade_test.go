package suites_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/tkg-e2e/harness/framework/clusters"
	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/suites"
)

// upgrade.cluster (config/upgrade-workload-2.overrides.yaml) names a
// cluster the workload stage makes: the upgrade's preflight passes when
// the workload stage runs first or the kept run being resumed has it, and
// otherwise fails before any cluster is made, saying how to fix it.
func TestUpgradeOfAWorkloadClusterNeedsTheWorkloadStageOrAKeptOne(t *testing.T) {
	env := localEnv(t, "../config/two-workloads.overrides.yaml", "../config/upgrade-workload-2.overrides.yaml")
	id, cl, made := env.Config.UpgradeTarget()
	if id != "workload-2" || made || cl == nil || cl.KubernetesVersion != "v1.32.5" {
		t.Fatalf("UpgradeTarget = %q, %+v, made %v; want workload-2 at v1.32.5, made by the workload stage", id, cl, made)
	}
	throughMove := []string{"bootstrap", "management", "move"}
	if err := suites.MadeBeforeUpgrade(env, id, true, append(throughMove, "workload", "health", "upgrade")...); err != nil {
		t.Errorf("the workload stage runs first: %v", err)
	}
	if err := suites.MadeBeforeUpgrade(env, id, false); err != nil {
		t.Errorf("a FOCUS regex (stages not known): %v", err)
	}
	err := suites.MadeBeforeUpgrade(env, id, true, append(throughMove, "upgrade")...)
	if err == nil || !strings.Contains(err.Error(), "upgrade.cluster is workload-2 (clusters.workloads[0]), which the workload stage makes") ||
		!strings.Contains(err.Error(), "FOCUS='workload upgrade'") {
		t.Errorf("FOCUS=upgrade without the workload stage: %v", err)
	}
	r := run.Resource{Kind: clusters.ResourceKind, Name: "tkg-e2e-wl2-x", Namespace: "default", Role: "workload", Cluster: id, State: "ready"}
	if err := env.State.PutResource(r); err != nil {
		t.Fatal(err)
	}
	if err := suites.MadeBeforeUpgrade(env, id, true, "upgrade"); err != nil {
		t.Errorf("RESUME=1 FOCUS=upgrade, the kept run has %s: %v", id, err)
	}
	if err := env.State.MarkDeleted(clusters.ResourceKind+"/default/tkg-e2e-wl2-x", "test", 0); err != nil {
		t.Fatal(err)
	}
	if err := suites.MadeBeforeUpgrade(env, id, true, "upgrade"); err == nil {
		t.Error("the kept run's cluster was deleted: the preflight passed")
	}
	// The upgrade makes no cluster of its own: clusters.upgrade is not one of the run's.
	if ids := env.Config.ClusterIDs(); slices.Contains(ids, config.IDUpgrade) {
		t.Errorf("ClusterIDs %v", ids)
	}
}
