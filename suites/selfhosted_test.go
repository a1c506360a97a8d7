package suites_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/cluster-api/test/infrastructure/container"

	"github.com/tkg-e2e/harness/framework/cleanup"
	"github.com/tkg-e2e/harness/framework/clusters"
	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/node"
	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/internal/testutil"
	"github.com/tkg-e2e/harness/suites"
	"github.com/tkg-e2e/harness/suites/lifecycle"
)

// localEnv builds the Env of a run with the shipped local profile (and
// overrides), CLEANUP_SELF_HOSTED unset, everything in temp folders.
func localEnv(t *testing.T, overrides ...string) *suites.Env {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	t.Setenv("CLEANUP_SELF_HOSTED", "")
	os.Unsetenv("CLEANUP_SELF_HOSTED") // restored by t.Setenv's cleanup
	env, err := suites.NewEnv(suites.EnvOptions{Registry: lifecycle.Registry, ConfigPath: "../config/local.yaml", Overrides: overrides,
		ArtifactFolder: filepath.Join(dir, "artifacts", "run"), Out: io.Discard})
	if err != nil {
		t.Fatalf("NewEnv: %v", err)
	}
	t.Cleanup(func() { _ = env.State.Close() })
	return env
}

// fakeNodes is a cleanup context of env's run whose container runtime is a
// fake holding one control-plane container of cluster, an hour old.
func fakeNodes(t *testing.T, env *suites.Env, cluster, id, name string) (context.Context, *container.FakeRuntime) {
	t.Helper()
	rt, fake := testutil.FakeContainers(t)
	inv := &node.FakeInventory{Runtime: fake, Containers: []node.ContainerInfo{
		{ID: id, Name: name, Created: time.Now().Add(-time.Hour), Labels: map[string]string{node.ClusterLabel: cluster, node.RoleLabel: "control-plane"}},
	}}
	return cleanup.WithRun(node.InventoryInto(container.RuntimeInto(t.Context(), rt), inv), env.State), fake
}

// The local profile removes a self-hosted management cluster's recorded
// containers by ID, and the how says it was cleanup.selfHosted's choice.
func TestLocalProfileRemovesTheSelfHostedClustersContainers(t *testing.T) {
	env := localEnv(t)
	if env.Config.Cleanup.SelfHosted != config.SelfHostedRemoveContainers {
		t.Fatalf("config/local.yaml: cleanup.selfHosted = %q, want removeContainers", env.Config.Cleanup.SelfHosted)
	}
	o := env.CleanupOptions()
	if o.SelfHosted == nil {
		t.Fatal("no SelfHosted deleter: a half-moved cluster would not be looked for")
	}
	ctx, fake := fakeNodes(t, env, "mgmt", "id-cp", "mgmt-cp")
	del := clusters.DeleterWith(time.Second, time.Second, nil, "", o.SelfHosted, o.Managed)
	how, err := del(ctx, run.Resource{Kind: clusters.ResourceKind, Namespace: "tkg-system", Name: "mgmt", Kubeconfig: "/nonexistent/mgmt",
		Attributes: map[string]string{clusters.AttrManagedBy: "/nonexistent/mgmt", clusters.AttrSelfHosted: "true", node.AttrContainers: "mgmt-cp=id-cp"}})
	if err != nil {
		t.Fatal(err)
	}
	want := "removed the run's 1 containers by ID (mgmt-cp) (self-hosted; by container ID because cleanup.selfHosted is removeContainers; " +
		"moveBack would delete it through a throw-away kind cluster)"
	if how != want {
		t.Errorf("how:\n got %q\nwant %q", how, want)
	}
	if got := strings.Join(fake.DeleteContainerCalls(), ","); got != "id-cp" {
		t.Errorf("deleted %q, want id-cp", got)
	}
}

// CI's last resumed run (config/cleanup-moveback.overrides.yaml) keeps the
// TKG-style delete. (Calling it needs Docker: the e2e run checks its how.)
func TestCleanupMoveBackOverridesKeepTheThrowAwayKindCluster(t *testing.T) {
	env := localEnv(t, "../config/cleanup-moveback.overrides.yaml")
	if env.Config.Cleanup.SelfHosted != config.SelfHostedMoveBack || env.Config.RemovesSelfHostedContainers() {
		t.Errorf("with config/cleanup-moveback.overrides.yaml: cleanup.selfHosted = %q, want moveBack", env.Config.Cleanup.SelfHosted)
	}
	if env.CleanupOptions().SelfHosted == nil {
		t.Error("no SelfHosted deleter with moveBack: the self-hosted cluster's containers would be removed")
	}
}

// CI's overrides move the run's own management cluster back and remove a
// day-two stage's self-hosted cluster by ID (cleanup.stageSelfHosted): no
// throw-away kind cluster is made for the stage's alone, and its how names
// the key.
func TestCleanupStageSelfHostedRemovesTheStagesClusterByID(t *testing.T) {
	env := localEnv(t, "../config/cleanup-moveback.overrides.yaml")
	if env.Config.RemovesSelfHostedContainers() || !env.Config.RemovesStageSelfHostedContainers() {
		t.Fatalf("cleanup = %+v, want the run's own moved back and the stage's removed", env.Config.Cleanup)
	}
	o := env.CleanupOptions()
	stage := run.Resource{Kind: clusters.ResourceKind, Role: suites.RoleManagement, Cluster: "provider-upgrade", Namespace: "provider-upgrade",
		Name: "pu", Kubeconfig: "/nonexistent/pu", Attributes: map[string]string{clusters.AttrManagedBy: "/nonexistent/pu",
			clusters.AttrSelfHosted: "true", node.AttrContainers: "pu-cp=id-pu"}}
	if release, _ := o.PrepareSelfHosted(t.Context(), []run.Resource{stage}); release != nil {
		release()
		t.Error("prepare started a throw-away kind cluster for a cluster whose containers are removed")
	}
	ctx, fake := fakeNodes(t, env, "pu", "id-pu", "pu-cp")
	how, err := clusters.DeleterWith(time.Second, time.Second, nil, "", o.SelfHosted, o.Managed)(ctx, stage)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(how, "removed the run's 1 containers by ID (pu-cp)") || !strings.Contains(how, "cleanup.stageSelfHosted is removeContainers") {
		t.Errorf("how = %q, want the stage's containers removed by ID because of cleanup.stageSelfHosted", how)
	}
	if got := strings.Join(fake.DeleteContainerCalls(), ","); got != "id-pu" {
		t.Errorf("deleted %q, want id-pu", got)
	}
}

// The move stage starts the move-back's throw-away kind cluster only when
// the move-back will be cleanup's first deletion: the run moves its own
// management cluster back and reaches no stage after the move that makes
// anything (make e2e FOCUS=move). Anything else keeps cleanup's own prepare.
func TestTeardownStartsAtTheMoveOnlyWhenTheMoveBackIsCleanupsFirstDeletion(t *testing.T) {
	moveBack := localEnv(t, "../config/cleanup-moveback.overrides.yaml")
	throughMove := []string{"bootstrap", "management", "move"}
	for _, c := range []struct {
		name   string
		env    *suites.Env
		known  bool
		stages []string
		want   bool
	}{
		{"FOCUS=move, moveBack", moveBack, true, throughMove, true},
		{"a FOCUS regex: the stages are not known", moveBack, false, throughMove, false},
		{"the workload cluster is deleted first", moveBack, true, append(throughMove, "workload", "health"), false},
		{"a day-two stage makes its own cluster", moveBack, true, append(throughMove, "upgrade"), false},
		{"the move not reached", moveBack, true, []string{"bootstrap", "management"}, false},
		{"cleanup.selfHosted removeContainers (the local default)", localEnv(t), true, throughMove, false},
	} {
		if got := suites.TeardownAtMove(c.env, c.known, c.stages...); got != c.want {
			t.Errorf("%s: teardown at the move = %v, want %v", c.name, got, c.want)
		}
	}
	moveBack.SkipCleanup = true
	if suites.TeardownAtMove(moveBack, true, throughMove...) {
		t.Error("SKIP_CLEANUP=1: teardown at the move, but nothing will be moved back")
	}
}
