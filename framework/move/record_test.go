package move

import (
	"testing"

	"github.com/tkg-e2e/harness/framework/clusters"
	"github.com/tkg-e2e/harness/framework/run"
)

// The state says a move started while it runs, and which cluster holds the
// Cluster once it is done; a cluster of another namespace is not touched.
func TestRecordMovingThenMoved(t *testing.T) {
	dir := t.TempDir()
	st, err := run.New(dir, "r", "local", "")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	mgmt := run.Resource{Kind: clusters.ResourceKind, Name: "mgmt", Namespace: "default", Role: clusters.RoleManagement,
		Kubeconfig: "/k/mgmt", State: "ready", Attributes: map[string]string{clusters.AttrManagedBy: "/k/kind"}}
	other := run.Resource{Kind: clusters.ResourceKind, Name: "mgmt", Namespace: "elsewhere", Role: clusters.RoleWorkload, State: "ready"}
	for _, r := range []run.Resource{mgmt, other} {
		if err := st.PutResource(r); err != nil {
			t.Fatal(err)
		}
	}
	attrs := func() map[string]string {
		t.Helper()
		back, err := run.Load(dir) // what a check reading state.json sees
		if err != nil {
			t.Fatal(err)
		}
		defer back.Close()
		for _, r := range back.Resources {
			if r.Namespace == "elsewhere" && len(r.Attributes) > 0 {
				t.Errorf("the other namespace's cluster was changed: %v", r.Attributes)
			}
		}
		r, _ := back.Resource(clusters.ResourceKind, "mgmt")
		return r.Attributes
	}

	if err := record(st, "default", "mgmt", moving("/k/mgmt")); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if a := attrs(); a[clusters.AttrMoving] != "/k/mgmt" || a[clusters.AttrManagedBy] != "/k/kind" || a[clusters.AttrSelfHosted] != "" {
		t.Fatalf("during the move: %v, want moving=/k/mgmt and still managed by /k/kind", a)
	}

	if st, err = run.Load(dir); err != nil {
		t.Fatal(err)
	}
	if err := record(st, "default", "mgmt", moved("/k/mgmt", "default", "mgmt")); err != nil {
		t.Fatal(err)
	}
	st.Close()
	a := attrs()
	if _, still := a[clusters.AttrMoving]; still || a[clusters.AttrManagedBy] != "/k/mgmt" || a[clusters.AttrSelfHosted] != "true" {
		t.Fatalf("after the move: %v, want no moving, managed by /k/mgmt, self-hosted", a)
	}
	if err := record(nil, "default", "mgmt", moving("/x")); err != nil {
		t.Fatalf("a run without state: %v", err)
	}
}
