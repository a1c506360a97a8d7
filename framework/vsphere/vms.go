package vsphere

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/vim25/mo"
)

// VM is a virtual machine as the leak check and the artifacts see it.
type VM struct {
	Name       string
	Ref        string
	PowerState string
	Template   bool
	IPAddress  string
}

// ClusterVMs lists the VMs in the placement's folder (and below it) whose
// names start with "<cluster>-" for one of clusters: CAPV names a cluster's
// VMs after its Machines, which are named after the cluster. Templates are
// listed too (Template true) so a caller can tell them apart.
func (s *Session) ClusterVMs(ctx context.Context, p Placement, clusters []string) ([]VM, error) {
	t, err := s.resolveFolder(ctx, p)
	if err != nil {
		return nil, err
	}
	refs, err := t.Finder.VirtualMachineList(ctx, t.Folder.InventoryPath+"/...")
	if err != nil {
		if isNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("listing VMs in %s: %w", t.Folder.InventoryPath, err)
	}
	var out []VM
	for _, r := range refs {
		name := r.Name()
		match := false
		for _, c := range clusters {
			if c != "" && strings.HasPrefix(name, c+"-") {
				match = true
			}
		}
		if !match {
			continue
		}
		var m mo.VirtualMachine
		if err := r.Properties(ctx, r.Reference(), []string{"config.template", "runtime.powerState", "guest.ipAddress"}, &m); err != nil {
			if isNotFound(err) {
				continue // deleted while we listed
			}
			return nil, fmt.Errorf("reading VM %s: %w", name, err)
		}
		vm := VM{Name: name, Ref: r.Reference().Value, PowerState: string(m.Runtime.PowerState)}
		if m.Config != nil {
			vm.Template = m.Config.Template
		}
		if m.Guest != nil {
			vm.IPAddress = m.Guest.IpAddress
		}
		out = append(out, vm)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// CheckTemplate says whether the template CAPV will clone exists in the
// placement's datacenter and is a template, before any cluster is created
// (CAPV itself would only say so in a VSphereVM condition, after a wait).
func (s *Session) CheckTemplate(ctx context.Context, p Placement, name string) error {
	t, err := s.resolveFolder(ctx, p)
	if err != nil {
		return err
	}
	in := fmt.Sprintf("datacenter %q", t.Datacenter.Name())
	vm, err := lookup(ctx, "template", name, in, t.Finder.VirtualMachine, func() ([]string, error) {
		list, err := t.Finder.VirtualMachineList(ctx, t.Datacenter.InventoryPath+"/vm/...")
		var out []string
		for _, v := range list {
			if ok, _ := v.IsTemplate(ctx); ok {
				out = append(out, v.InventoryPath)
			}
		}
		return out, err
	})
	if err != nil {
		return err
	}
	ok, err := vm.IsTemplate(ctx)
	if err != nil {
		return fmt.Errorf("reading %s: %w", vm.InventoryPath, err)
	}
	if !ok {
		return fmt.Errorf("%s is a VM, not a template (an interrupted import?): mark it as a template or let the ova stage re-import it", vm.InventoryPath)
	}
	return nil
}

// DeleteTemplate destroys the template at an inventory path, if it is one
// (a VM of the same name is not touched). Gone already is no error.
func (s *Session) DeleteTemplate(ctx context.Context, path string, timeout time.Duration, progress io.Writer, prefix string) error {
	vm, err := find.NewFinder(s.Vim(), false).VirtualMachine(ctx, path)
	if err != nil {
		if isNotFound(err) {
			return nil
		}
		return fmt.Errorf("looking up %s: %w", path, err)
	}
	ok, err := vm.IsTemplate(ctx)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	if !ok {
		return fmt.Errorf("%s is not a template: left alone", path)
	}
	return destroyVM(ctx, vm, taskWaits{Timeout: timeout, Interval: time.Second, Progress: progress, Prefix: prefix})
}
