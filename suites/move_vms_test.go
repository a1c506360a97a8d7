package suites

import (
	"strings"
	"testing"

	"github.com/tkg-e2e/harness/framework/vsphere"
)

func TestTheMoveMayNotReprovisionVMs(t *testing.T) {
	before := []vsphere.VM{{Name: "m-cp-1", Ref: "vm-41", PowerState: "poweredOn"}, {Name: "m-md-0-a", Ref: "vm-42", PowerState: "poweredOn"}}
	if said, err := compareVMs("m", before, before); err != nil || !strings.Contains(said, "2 VMs of m are the same") {
		t.Fatalf("same VMs: %q, %v", said, err)
	}
	// Re-cloned under the same name: a new managed object reference.
	recloned := []vsphere.VM{before[0], {Name: "m-md-0-a", Ref: "vm-57", PowerState: "poweredOn"}}
	_, err := compareVMs("m", before, recloned)
	if err == nil || !strings.Contains(err.Error(), "destroyed: m-md-0-a (vm-42)") || !strings.Contains(err.Error(), "new: m-md-0-a (vm-57)") {
		t.Fatalf("a re-cloned VM: %v", err)
	}
	off := []vsphere.VM{before[0], {Name: "m-md-0-a", Ref: "vm-42", PowerState: "poweredOff"}}
	if _, err := compareVMs("m", before, off); err == nil || !strings.Contains(err.Error(), "poweredOn -> poweredOff") {
		t.Fatalf("a VM powered off by the move: %v", err)
	}
	if _, err := compareVMs("m", nil, nil); err == nil || !strings.Contains(err.Error(), "no VM of m before the move") {
		t.Fatalf("nothing to compare must not pass: %v", err)
	}
}
