package vsphere

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	"sigs.k8s.io/yaml"

	"github.com/tkg-e2e/harness/framework/redact"
)

// vmRecord is one VM or template as inventory.yaml shows it.
type vmRecord struct {
	Name           string         `json:"name"`
	Path           string         `json:"path"`
	Template       bool           `json:"template"`
	PowerState     string         `json:"powerState,omitempty"`
	GuestState     string         `json:"guestState,omitempty"`
	ToolsStatus    string         `json:"toolsRunningStatus,omitempty"`
	IPAddress      string         `json:"ipAddress,omitempty"`
	GuestID        string         `json:"guestId,omitempty"`
	NumCPU         int32          `json:"numCPU,omitempty"`
	MemoryMB       int32          `json:"memoryMB,omitempty"`
	Annotation     string         `json:"annotation,omitempty"`
	VAppProperties []vappProperty `json:"vAppProperties,omitempty"`
	// Questions are pending VM questions: a VM waiting on one never boots.
	Questions []string `json:"pendingQuestions,omitempty"`
	// ConfigMissing: vCenter had no config for the VM (being created or deleted).
	ConfigMissing bool `json:"configMissing,omitempty"`
}

type vappProperty struct {
	ID               string `json:"id"`
	Label            string `json:"label,omitempty"`
	Type             string `json:"type,omitempty"`
	Value            string `json:"value"`
	DefaultValue     string `json:"defaultValue,omitempty"`
	UserConfigurable bool   `json:"userConfigurable,omitempty"`
}

// vmProperties are the properties read in one round trip. extraConfig is
// left out on purpose: guestinfo.userdata carries cloud-init secrets.
var vmProperties = []string{"name", "config.template", "config.annotation", "config.vAppConfig", "config.guestId",
	"config.hardware.numCPU", "config.hardware.memoryMB", "runtime.powerState", "runtime.question",
	"guest.guestState", "guest.toolsRunningStatus", "guest.ipAddress"}

func (c *collection) inventory(ctx context.Context) error {
	var errs []error
	vms, err := c.f.VirtualMachineList(ctx, path.Join(c.folderPath(), "..."))
	var nf *find.NotFoundError
	switch {
	case errors.As(err, &nf):
		// An empty folder is "not found" to the finder; the folder itself may exist.
		if _, ferr := c.f.Folder(ctx, c.folderPath()); ferr != nil {
			errs = append(errs, fmt.Errorf("VM folder %s: %w", c.folderPath(), ferr))
		}
	case err != nil:
		errs = append(errs, fmt.Errorf("list VMs in %s: %w", c.folderPath(), err))
	}
	seen := map[types.ManagedObjectReference]bool{}
	for _, vm := range vms {
		seen[vm.Reference()] = true
	}
	for _, name := range c.in.TemplateNames {
		found, err := c.f.VirtualMachineList(ctx, name)
		if err != nil {
			errs = append(errs, fmt.Errorf("template %s: %w", name, err))
			continue
		}
		for _, vm := range found {
			if !seen[vm.Reference()] {
				seen[vm.Reference()] = true
				vms = append(vms, vm)
			}
		}
	}

	records, err := c.describe(ctx, vms)
	if err != nil {
		errs = append(errs, err)
	}
	doc := struct {
		Datacenter string     `json:"datacenter"`
		Folder     string     `json:"folder"`
		VMs        []vmRecord `json:"vms"`
	}{c.dc.InventoryPath, c.folderPath(), records}
	b, err := yaml.Marshal(doc)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	if err := c.w.WriteFile(path.Join(Folder, "inventory.yaml"), b); err != nil {
		errs = append(errs, err)
	}

	c.mu.Lock()
	c.findings.VMs = 0
	c.findings.Templates = nil
	for _, r := range records {
		if r.Template {
			c.findings.Templates = append(c.findings.Templates, r.Name)
		} else {
			c.findings.VMs++
		}
	}
	c.mu.Unlock()
	return errors.Join(errs...)
}

func (c *collection) describe(ctx context.Context, vms []*object.VirtualMachine) ([]vmRecord, error) {
	if len(vms) == 0 {
		return []vmRecord{}, nil
	}
	refs := make([]types.ManagedObjectReference, len(vms))
	paths := map[types.ManagedObjectReference]string{}
	for i, vm := range vms {
		refs[i] = vm.Reference()
		paths[refs[i]] = vm.InventoryPath
	}
	var mos []mo.VirtualMachine
	if err := property.DefaultCollector(c.c).Retrieve(ctx, refs, vmProperties, &mos); err != nil {
		return nil, fmt.Errorf("read VM properties: %w", err)
	}
	out := make([]vmRecord, 0, len(mos))
	for _, m := range mos {
		r := vmRecord{Name: m.Name, Path: paths[m.Reference()], PowerState: string(m.Runtime.PowerState)}
		if m.Guest != nil {
			r.GuestState, r.ToolsStatus, r.IPAddress = m.Guest.GuestState, m.Guest.ToolsRunningStatus, m.Guest.IpAddress
		}
		if q := m.Runtime.Question; q != nil {
			r.Questions = append(r.Questions, q.Text)
		}
		if cfg := m.Config; cfg != nil {
			r.Template, r.Annotation, r.GuestID = cfg.Template, cfg.Annotation, cfg.GuestId
			r.NumCPU, r.MemoryMB = cfg.Hardware.NumCPU, cfg.Hardware.MemoryMB
			if cfg.VAppConfig != nil {
				if info := cfg.VAppConfig.GetVmConfigInfo(); info != nil {
					r.VAppProperties = vappProperties(info.Property)
				}
			}
		} else {
			r.ConfigMissing = true
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path+out[i].Name < out[j].Path+out[j].Name })
	return out, nil
}

// vappProperties keeps what the OVA declared (VERSION, KUBERNETES_SEMVER,
// DISTRO_*); a property typed password is masked whatever its value, since
// its value is not one the redactor was told about.
func vappProperties(props []types.VAppPropertyInfo) []vappProperty {
	out := make([]vappProperty, 0, len(props))
	for _, p := range props {
		v := vappProperty{ID: p.Id, Label: p.Label, Type: p.Type, Value: p.Value, DefaultValue: p.DefaultValue}
		if p.UserConfigurable != nil {
			v.UserConfigurable = *p.UserConfigurable
		}
		if strings.HasPrefix(strings.ToLower(p.Type), "password") {
			if v.Value != "" {
				v.Value = redact.Mask
			}
			if v.DefaultValue != "" {
				v.DefaultValue = redact.Mask
			}
		}
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
