package node

import (
	"strings"
	"testing"
	"time"

	"github.com/tkg-e2e/harness/framework/run"
)

func TestClaimTellsTheRunsContainersFromLookalikes(t *testing.T) {
	started := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	id := Identity{RunID: "20261122-100000-abcde", Started: started, Until: started.Add(time.Hour)}
	r := run.Resource{Kind: "capi-cluster", Name: "tkg-e2e-mgmt-abcde",
		Attributes: map[string]string{AttrContainers: "tkg-e2e-mgmt-abcde-lb=id-lb,tkg-e2e-mgmt-abcde-cp-x=id-cp"}}
	node := func(id, name string, created time.Time, extra ...string) ContainerInfo {
		l := map[string]string{ClusterLabel: r.Name, RoleLabel: "control-plane"}
		for i := 0; i+1 < len(extra); i += 2 {
			if extra[i+1] == "" {
				delete(l, extra[i])
			} else {
				l[extra[i]] = extra[i+1]
			}
		}
		return ContainerInfo{ID: id, Name: name, Created: created, Labels: l}
	}
	during := started.Add(10 * time.Minute)
	for _, tc := range []struct {
		c    ContainerInfo
		mine bool
		why  string
	}{
		{node("id-cp", "tkg-e2e-mgmt-abcde-cp-x", during), true, "recorded"},
		// Recorded wins even over a creation time outside the window.
		{node("id-lb", "tkg-e2e-mgmt-abcde-lb", started.Add(-time.Hour)), true, "recorded"},
		{node("id-new", "tkg-e2e-mgmt-abcde-md-0-y", during), true, "created while the run worked"},
		// Within the second the run started (docker has seconds).
		{node("id-same-second", "tkg-e2e-mgmt-abcde-md-0-z", started), true, "created while the run worked"},
		{node("id-decoy", "tkg-e2e-mgmt-abcde-decoy", during, RoleLabel, ""), false, "no io.x-k8s.kind.role label"},
		{node("id-old", "tkg-e2e-mgmt-abcde-cp-old", started.Add(-time.Minute)), false, "before the run started"},
		{node("id-later", "tkg-e2e-mgmt-abcde-cp-later", started.Add(2*time.Hour)), false, "after the run last wrote its state"},
		{node("id-other-name", "someone-else", during), false, "not named after the cluster"},
		{node("id-other-run", "tkg-e2e-mgmt-abcde-cp-q", during, RunLabel, "20261122-100001-zzzzz"), false, "another run"},
		{node("id-our-label", "anything", started.Add(-time.Hour), RunLabel, id.RunID), true, "labelled"},
	} {
		v := Claim([]ContainerInfo{tc.c}, r, id)[0]
		if v.Mine != tc.mine || !strings.Contains(v.Why, tc.why) {
			t.Errorf("%s: mine %v (%s), want %v (%s)", tc.c.ID, v.Mine, v.Why, tc.mine, tc.why)
		}
	}
	// Without a run (a deleter called outside cleanup) only recorded IDs count.
	if v := Claim([]ContainerInfo{node("id-new", "tkg-e2e-mgmt-abcde-md-0-y", during)}, r, Identity{})[0]; v.Mine {
		t.Errorf("an unrecorded container was claimed without a run identity: %+v", v)
	}
}

func TestRemoveOwnedRemovesByIDAndLeavesTheDecoy(t *testing.T) {
	ctx, rt := fake(t)
	started := time.Now().UTC().Add(-time.Hour)
	name := "tkg-e2e-kind-abcde"
	inv := &FakeInventory{Runtime: rt, Containers: []ContainerInfo{
		{ID: "id-cp", Name: name + "-control-plane", Created: started.Add(time.Minute),
			Labels: map[string]string{ClusterLabel: name, RoleLabel: "control-plane"}},
		{ID: "id-decoy", Name: name + "-decoy", Created: started.Add(2 * time.Minute), Labels: map[string]string{ClusterLabel: name}},
	}}
	ctx = InventoryInto(ctx, inv)
	r := run.Resource{Kind: "kind-cluster", Name: name, Attributes: map[string]string{AttrContainers: name + "-control-plane=id-cp"}}
	removed, left, err := RemoveOwned(ctx, r, Identity{RunID: "x", Started: started, Until: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rt.DeleteContainerCalls(), ","); got != "id-cp" {
		t.Fatalf("deleted %q, want only the run's container by ID", got)
	}
	if strings.Join(removed, ",") != name+"-control-plane" || len(left) != 1 ||
		!strings.Contains(left[0], name+"-decoy") || !strings.Contains(left[0], "left alone") {
		t.Fatalf("removed %v, left alone %v", removed, left)
	}
}

func TestRecordContainersRecordsOnlyTheNamedAndAddsLater(t *testing.T) {
	ctx, rt := fake(t)
	st, err := run.New(t.TempDir(), "20261122-100000-abcde", "local", "")
	if err != nil {
		t.Fatal(err)
	}
	name := "tkg-e2e-mgmt-abcde"
	r := run.Resource{Kind: "capi-cluster", Namespace: "ns", Name: name, State: "creating", Attributes: map[string]string{"flavor": "development"}}
	if err := st.PutResource(r); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	lbl := func(role string) map[string]string { return map[string]string{ClusterLabel: name, RoleLabel: role} }
	inv := &FakeInventory{Runtime: rt, Containers: []ContainerInfo{
		{ID: "id-lb", Name: name + "-lb", Created: now, Labels: lbl(RoleLoadBalancer)},
		{ID: "id-cp", Name: name + "-cp-1", Created: now, Labels: lbl("control-plane")},
		{ID: "id-decoy", Name: name + "-decoy", Created: now, Labels: lbl("worker")},
		{ID: "id-old", Name: name + "-cp-0", Created: now.Add(-24 * time.Hour), Labels: lbl("control-plane")},
	}}
	ctx = InventoryInto(ctx, inv)
	names := map[string]bool{name + "-lb": true, name + "-cp-1": true, name + "-cp-0": true, name + "-md-1": true}
	if _, err := RecordContainers(ctx, st, r.Key(), names); err != nil {
		t.Fatal(err)
	}
	got, _ := st.Resource("capi-cluster", name)
	if want := name + "-cp-1=id-cp," + name + "-lb=id-lb"; got.Attributes[AttrContainers] != want || got.Attributes["flavor"] != "development" {
		t.Fatalf("recorded %q (attrs %v), want %q", got.Attributes[AttrContainers], got.Attributes, want)
	}
	inv.Containers = append(inv.Containers, ContainerInfo{ID: "id-md", Name: name + "-md-1", Created: time.Now().UTC(), Labels: lbl("worker")})
	if _, err := RecordContainers(ctx, st, r.Key(), names); err != nil {
		t.Fatal(err)
	}
	got, _ = st.Resource("capi-cluster", name)
	if len(Recorded(got)) != 3 || Recorded(got)["id-md"] != name+"-md-1" {
		t.Fatalf("second record: %v", Recorded(got))
	}
}
