package vsphere

import (
	"context"
	"fmt"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/mo"
)

// existingVM is a VM or template that already carries the name an import wants.
type existingVM struct {
	vm         *object.VirtualMachine
	path       string
	template   bool
	annotation string
	id         identity
	inFolder   bool
}

// findByName looks the name up in the whole datacenter before importing:
// vSphere (and vcsim) refuse a second VM with the same name on the same
// datastore only late, at the lease wait, with a bare FileAlreadyExists.
func findByName(ctx context.Context, s *Session, t *Target, name string) (*existingVM, error) {
	folders, err := t.Datacenter.Folders(ctx)
	if err != nil {
		return nil, err
	}
	m := view.NewManager(s.Vim())
	v, err := m.CreateContainerView(ctx, folders.VmFolder.Reference(), []string{"VirtualMachine"}, true)
	if err != nil {
		return nil, err
	}
	defer func() { _ = v.Destroy(context.WithoutCancel(ctx)) }()
	refs, err := v.Find(ctx, []string{"VirtualMachine"}, property.Match{"name": name})
	if err != nil {
		return nil, fmt.Errorf("looking up VM %q in datacenter %q: %w", name, t.Datacenter.Name(), err)
	}
	if len(refs) == 0 {
		return nil, nil
	}
	var all []mo.VirtualMachine
	if err := property.DefaultCollector(s.Vim()).Retrieve(ctx, refs, []string{"name", "parent", "config.template", "config.annotation"}, &all); err != nil {
		return nil, fmt.Errorf("looking up VM %q in datacenter %q: %w", name, t.Datacenter.Name(), err)
	}
	// The match is a glob; keep exact names only.
	var vms []mo.VirtualMachine
	for _, vm := range all {
		if vm.Name == name {
			vms = append(vms, vm)
		}
	}
	if len(vms) == 0 {
		return nil, nil
	}
	if len(vms) > 1 {
		return nil, fmt.Errorf("%d VMs are named %q in datacenter %q; rename or remove the extra ones", len(vms), name, t.Datacenter.Name())
	}
	mvm := vms[0]
	e := &existingVM{vm: object.NewVirtualMachine(s.Vim(), mvm.Self)}
	if mvm.Config != nil {
		e.template = mvm.Config.Template
		e.annotation = mvm.Config.Annotation
		e.id = annotationIdentity(mvm.Config.Annotation)
	}
	e.inFolder = mvm.Parent != nil && *mvm.Parent == t.Folder.Reference()
	if e.path, err = find.InventoryPath(ctx, s.Vim(), mvm.Self); err != nil {
		e.path = name
	}
	e.vm.InventoryPath = e.path
	return e, nil
}
