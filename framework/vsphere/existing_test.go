package vsphere_test

import (
	"context"
	"testing"

	"github.com/vmware/govmomi/find"

	"github.com/tkg-e2e/harness/framework/vsphere"
	"github.com/tkg-e2e/harness/framework/vsphere/ovagen"
)

// A VM that carries the harness's sha line but is not a template is what an
// import interrupted between upload and MarkAsTemplate leaves: it is removed
// and the OVA imported again.
func TestLeftoverOfAnInterruptedImportIsReplaced(t *testing.T) {
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
	var progress syncBuffer
	r, err := importOne(t, s, vsphere.OVA{Source: ova.Path}, func(in *vsphere.ImportInput) { in.Progress = &progress })
	if err != nil {
		t.Fatal(err)
	}
	vm := vmByName(t, s, "node-leftover")
	if r.Action != vsphere.Imported || vm.Self == first.Ref || !vm.Config.Template {
		t.Errorf("result %+v, vm %v template=%v; want a fresh template", r, vm.Self, vm.Config.Template)
	}
	mustContain(t, errString(progress.String()), "removing /DC0/vm/node-leftover, a leftover of an interrupted import")
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
