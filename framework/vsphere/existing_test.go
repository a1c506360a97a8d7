package vsphere_test

import (
	"context"
	"testing"

	"github.com/vmware/govmomi/find"

	"github.com/tkg-e2e/harness/framework/vsphere"
	"github.com/tkg-e2e/harness/framework/vsphere/ovagen"
)

// A VM that carries the harness's identity lines under the final name but is not a
// template is no import in progress of this harness (imports run under a
// temporary name): it may be an older version's leftover or a template
// someone converted to a VM and uses. It is reported, never deleted.
func TestSameNamedVMWithTheShaLineIsReportedNotDeleted(t *testing.T) {
	s := connect(t)
	ctx := context.Background()
	ova := writeOVA(t, "node-leftover", ovagen.Options{})
	first, err := importOne(t, s, vsphere.OVA{Source: ova.Path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := s.Resolve(ctx, placement)
	if err != nil {
		t.Fatal(err)
	}
	if err := vmObject(s, vmByName(t, s, "node-leftover")).MarkAsVirtualMachine(ctx, *tg.ResourcePool, nil); err != nil {
		t.Fatal(err)
	}
	_, err = importOne(t, s, vsphere.OVA{Source: ova.Path}, nil)
	mustContain(t, err, `a VM (not a template) named "node-leftover" exists at /DC0/vm/node-leftover and carries the harness's OVA identity annotation`,
		"does not delete it")
	if vm := vmByName(t, s, "node-leftover"); vm == nil || vm.Self != first.Ref {
		t.Errorf("the VM was touched: %+v", vm)
	}
}

func TestAVMTheHarnessDidNotCreateIsNeverTouched(t *testing.T) {
	s := connect(t)
	// DC0_H0_VM0 is one of the simulator's own VMs, in /DC0/vm.
	ova := writeOVA(t, "node-foreign", ovagen.Options{})
	_, err := importOne(t, s, vsphere.OVA{Source: ova.Path, Name: "DC0_H0_VM0"}, func(in *vsphere.ImportInput) { in.Replace = true })
	mustContain(t, err, `a VM (not a template) named "DC0_H0_VM0" already exists at /DC0/vm/DC0_H0_VM0 and was not imported by the harness`)
	if vmByName(t, s, "DC0_H0_VM0") == nil {
		t.Fatal("the foreign VM is gone")
	}
}

func TestSameNameInAnotherFolderIsReportedNotDeleted(t *testing.T) {
	s := connect(t)
	ctx := context.Background()
	f := find.NewFinder(s.Vim())
	root, err := f.Folder(ctx, "/DC0/vm")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := root.CreateFolder(ctx, "other-team"); err != nil {
		t.Fatal(err)
	}
	ova := writeOVA(t, "node-elsewhere", ovagen.Options{})
	if _, err := importOne(t, s, vsphere.OVA{Source: ova.Path}, func(in *vsphere.ImportInput) { in.Placement.Folder = "/DC0/vm/other-team" }); err != nil {
		t.Fatal(err)
	}
	_, err = importOne(t, s, vsphere.OVA{Source: ova.Path}, func(in *vsphere.ImportInput) { in.Replace = true })
	mustContain(t, err, `a VM named "node-elsewhere" already exists at /DC0/vm/other-team/node-elsewhere, outside the target folder /DC0/vm`)
}

type errString string

func (e errString) Error() string { return string(e) }
