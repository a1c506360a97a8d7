package kind

import (
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/cluster-api/test/infrastructure/container"

	"github.com/tkg-e2e/harness/framework/cleanup"
	"github.com/tkg-e2e/harness/framework/node"
	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/internal/testutil"
)

// fakeRun is a run's state and Cluster API's fake container runtime, its
// delete log empty.
func fakeRun(t *testing.T) (container.Runtime, *container.FakeRuntime, *run.State) {
	t.Helper()
	rt, fake := testutil.FakeContainers(t)
	st, err := run.New(t.TempDir(), "20261122-100000-abcde", "local", "")
	if err != nil {
		t.Fatal(err)
	}
	return rt, fake, st
}

// The move stage's delete of the kind cluster, like cleanup's, removes the
// run's containers by ID and leaves a decoy labelled with the cluster's name.
func TestDeleteOfARecordedClusterLeavesTheDecoy(t *testing.T) {
	rt, fake, st := fakeRun(t)
	name := "tkg-e2e-kind-abcde"
	if err := st.PutResource(run.Resource{Kind: ResourceKind, Name: name, Role: RoleBootstrap, State: "creating"}); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	inv := &node.FakeInventory{Runtime: fake, Containers: []node.ContainerInfo{
		{ID: "id-cp", Name: name + "-control-plane", Created: now, Labels: map[string]string{node.ClusterLabel: name, node.RoleLabel: "control-plane"}},
		{ID: "id-decoy", Name: name + "-decoy", Created: now, Labels: map[string]string{node.ClusterLabel: name}},
	}}
	ctx := node.InventoryInto(container.RuntimeInto(t.Context(), rt), inv)
	ids, err := RecordContainers(ctx, st, name)
	if err != nil || strings.Join(ids, ",") != name+"-control-plane" {
		t.Fatalf("recorded %v, %v", ids, err)
	}
	var out strings.Builder
	if err := Delete(ctx, DeleteInput{Name: name, State: st, Timeout: time.Minute, Progress: &out}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(fake.DeleteContainerCalls(), ","); got != "id-cp" {
		t.Fatalf("deleted %q", got)
	}
	if !strings.Contains(out.String(), name+"-decoy") || !strings.Contains(out.String(), "left alone") {
		t.Fatalf("the decoy is not reported:\n%s", out.String())
	}
	if len(st.Live()) != 0 {
		t.Fatalf("not marked deleted: %+v", st.Live())
	}
}

func TestKindNodeNames(t *testing.T) {
	for name, want := range map[string]bool{"c-control-plane": true, "c-control-plane2": true, "c-worker": true, "c-worker3": true,
		"c-external-load-balancer": true, "c-decoy": false, "c-worker-x": false, "d-control-plane": false, "c-control-planes": false} {
		if got := kindNodeName("c", name); got != want {
			t.Errorf("kindNodeName(c, %s) = %v", name, got)
		}
	}
}

// The self-hosted teardown deletes its throw-away kind cluster, made during
// cleanup (after the time cleanup's identity window ends), with a resource
// built by name: the containers the state recorded for it still count.
func TestDeleterUsesWhatTheStateRecorded(t *testing.T) {
	rt, fake, st := fakeRun(t)
	name := "tkg-e2e-kind-abcde-teardown"
	later := time.Now().Add(time.Hour) // made after cleanup began
	inv := &node.FakeInventory{Runtime: fake, Containers: []node.ContainerInfo{
		{ID: "id-cp", Name: name + "-control-plane", Created: later, Labels: map[string]string{node.ClusterLabel: name, node.RoleLabel: "control-plane"}},
	}}
	ctx := cleanup.WithRun(node.InventoryInto(container.RuntimeInto(t.Context(), rt), inv), st)
	if err := st.PutResource(run.Resource{Kind: ResourceKind, Name: name, State: "ready",
		Attributes: map[string]string{node.AttrContainers: name + "-control-plane=id-cp"}}); err != nil {
		t.Fatal(err)
	}
	how, err := Deleter(time.Minute, nil, "")(ctx, run.Resource{Kind: ResourceKind, Name: name})
	if err != nil || got(fake) != "id-cp" {
		t.Fatalf("how %q, err %v, deleted %q", how, err, got(fake))
	}
}

func got(f *container.FakeRuntime) string { return strings.Join(f.DeleteContainerCalls(), ",") }
