package cleanup

import (
	"strings"
	"testing"
	"time"

	"github.com/tkg-e2e/harness/framework/run"
)

func TestRunSkipsUnknownKindsWithTheirHint(t *testing.T) {
	st, err := run.New(t.TempDir(), "r", "local", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutResource(run.Resource{Kind: "vsphere-template", Name: "t", State: "ready", DeleteHint: "govc vm.destroy t"}); err != nil {
		t.Fatal(err)
	}
	if err := st.PutResource(run.Resource{Kind: "kind-cluster", Name: "gone", State: "deleted"}); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(t.Context(), Input{State: st, ClusterDeleteTimeout: time.Second, KindDeleteTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Skipped) != 1 || !strings.Contains(rep.Skipped[0], "govc vm.destroy t") || len(rep.Deleted) != 0 {
		t.Fatalf("%+v", rep)
	}
}

func TestLeakReport(t *testing.T) {
	r := &LeakReport{Checked: "x"}
	if !r.Clean() || r.String() != "no leaks (x)" {
		t.Fatal(r.String())
	}
	r.Containers = []string{"h4e-mgmt-lb (running)"}
	if r.Clean() || !strings.Contains(r.String(), "LEAKS: containers [h4e-mgmt-lb (running)]") {
		t.Fatal(r.String())
	}
}
