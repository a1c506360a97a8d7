package move

import (
	"strings"
	"testing"

	"github.com/tkg-e2e/harness/framework/clusters"
	"github.com/tkg-e2e/harness/framework/kube"
)

// The entries below are shaped like clusterctl v1.14's move log
// (objectgraph.go Discovery, mover.go createTargetObject/deleteSourceObject).
func TestRecorderReadsDiscoveryAndMoveSet(t *testing.T) {
	r := newRecorder()
	for _, e := range []kube.LogEntry{
		{Level: 0, Msg: "Performing move..."},
		{Level: 0, Msg: "Discovering Cluster API objects"},
		{Level: 5, Msg: "Machine", KV: []any{"count", 2}},
		{Level: 5, Msg: "Secret", KV: []any{"count", 9}},
		{Level: 5, Msg: "Excluding secret from move (not linked with any Cluster)", KV: []any{"name", "x"}},
		{Level: 1, Msg: "Total objects", KV: []any{"count", 11}},
		{Level: 5, Msg: "Resource not blocking move", KV: []any{"count", 1}}, // after discovery: not a count
		{Level: 1, Msg: "Creating", KV: []any{"Cluster", "mgmt", "Namespace", "ns"}},
		{Level: 1, Msg: "Creating", KV: []any{"Machine", "mgmt-a", "Namespace", "ns"}},
		{Level: 1, Msg: "Deleting", KV: []any{"Machine", "mgmt-a", "Namespace", "ns"}},
	} {
		r.observe(e)
	}
	if !r.sawTotal || r.total != 11 || r.discovered["Machine"] != 2 || r.discovered["Secret"] != 9 || len(r.discovered) != 2 {
		t.Fatalf("discovery: total=%d %v", r.total, r.discovered)
	}
	if len(r.created) != 2 || r.created[1] != (Object{Kind: "Machine", Namespace: "ns", Name: "mgmt-a"}) || len(r.deleted) != 1 {
		t.Fatalf("created %v deleted %v", r.created, r.deleted)
	}
	inv := &Inventory{Discovered: r.discovered, DiscoveredTotal: r.total, Objects: sortObjects(r.created)}
	s := inv.String()
	for _, want := range []string{"Machine Count=2\n", "Secret Count=9\n", "Total objects Count=11\n", "to move: Cluster=1 Machine=1 (total 2)"} {
		if !strings.Contains(s, want) {
			t.Errorf("inventory %q lacks %q", s, want)
		}
	}
}

func TestDiffCounts(t *testing.T) {
	d := DiffCounts(map[string]int{"Secret": 12, "Machine": 2}, map[string]int{"Secret": 11, "Machine": 2, "Cluster": 1})
	if strings.Join(d, "|") != "Cluster: source 0, target 1|Secret: source 12, target 11" {
		t.Fatalf("diff %v", d)
	}
	if len(DiffCounts(map[string]int{"A": 1}, map[string]int{"A": 1})) != 0 {
		t.Fatal("equal counts must not differ")
	}
}

func TestMachineDiff(t *testing.T) {
	before := []clusters.Machine{{Name: "a", UID: "1", ProviderID: "docker:////a"}, {Name: "b", UID: "2", ProviderID: "docker:////b"}}
	moved := []clusters.Machine{{Name: "a", UID: "9", ProviderID: "docker:////a"}, {Name: "b", UID: "8", ProviderID: "docker:////b"}}
	if d := machineDiff(before, moved, false); d != "" {
		t.Fatalf("a move changes UIDs by design; got %q", d)
	}
	if d := machineDiff(moved, []clusters.Machine{moved[0], {Name: "b", UID: "7", ProviderID: "docker:////b"}}, true); !strings.Contains(d, "b UID 8 -> 7") {
		t.Fatalf("want a recreated Machine, got %q", d)
	}
	d := machineDiff(before, []clusters.Machine{before[0], {Name: "c", ProviderID: "docker:////c"}}, false)
	if !strings.Contains(d, "Machine b is gone") || !strings.Contains(d, "new Machine c") {
		t.Fatalf("want a replaced Machine, got %q", d)
	}
}

func TestMoveValidatesInput(t *testing.T) {
	_, err := Move(t.Context(), Input{FromKubeconfig: "a", ToKubeconfig: "a"})
	for _, want := range []string{"same file", "Namespace and ClusterName", "Timeouts.PreCheck must be > 0", "Timeouts.Reconcile must be > 0"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
}
