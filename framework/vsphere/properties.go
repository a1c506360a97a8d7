package vsphere

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// VAppProperty is one vApp property of a template.
type VAppProperty struct {
	ID       string `json:"id"`
	Category string `json:"category,omitempty"`
	Label    string `json:"label,omitempty"`
	// Value is what TKG reads: the set value, or the OVF default when none
	// was set (node OVA properties are not user-configurable, so only the
	// default is ever filled).
	Value string `json:"value"`
}

// TemplateProperties reads the vApp properties of a VM or template, by
// inventory path (or a name the finder can resolve in the datacenter).
func (s *Session) TemplateProperties(ctx context.Context, datacenter, path string) ([]VAppProperty, error) {
	f := find.NewFinder(s.Vim(), false)
	dc, err := lookupDatacenter(ctx, f, datacenter)
	if err != nil {
		return nil, err
	}
	f.SetDatacenter(dc)
	vm, err := f.VirtualMachine(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("template %q in datacenter %q: %w", path, dc.Name(), err)
	}
	var mvm mo.VirtualMachine
	if err := vm.Properties(ctx, vm.Reference(), []string{"config.vAppConfig"}, &mvm); err != nil {
		return nil, fmt.Errorf("reading vApp properties of %s: %w", vm.InventoryPath, err)
	}
	return vappProperties(mvm.Config), nil
}

func vappProperties(cfg *types.VirtualMachineConfigInfo) []VAppProperty {
	if cfg == nil || cfg.VAppConfig == nil {
		return nil
	}
	vc, ok := cfg.VAppConfig.(*types.VmConfigInfo)
	if !ok {
		return nil
	}
	out := make([]VAppProperty, 0, len(vc.Property))
	for _, p := range vc.Property {
		v := p.Value
		if v == "" {
			v = p.DefaultValue
		}
		out = append(out, VAppProperty{ID: p.Id, Category: p.Category, Label: p.Label, Value: v})
	}
	return out
}

// PropertyMismatch is one expected property that is wrong or absent.
type PropertyMismatch struct {
	ID       string `json:"id"`
	Expected string `json:"expected"`
	Found    string `json:"found,omitempty"`
	Missing  bool   `json:"missing,omitempty"`
}

// PropertyError lists every mismatch of a template at once, so one run shows
// all that is wrong with an OVA rather than the first thing.
type PropertyError struct {
	Template string
	// Source, when set, is the OVA the properties were read from before
	// importing; the message then names it instead of the template.
	Source     string
	Mismatches []PropertyMismatch
	// Present are the property ids the template has, to spot a typo in the config.
	Present []string
}

func (e *PropertyError) Error() string {
	parts := make([]string, 0, len(e.Mismatches))
	missing := false
	for _, m := range e.Mismatches {
		if m.Missing {
			missing = true
			parts = append(parts, fmt.Sprintf("%s: expected %q, property missing", m.ID, m.Expected))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s: expected %q, found %q", m.ID, m.Expected, m.Found))
	}
	what := "template " + e.Template
	if e.Source != "" {
		what = e.Source
	}
	msg := fmt.Sprintf("%s: %d vApp propert%s do not match the config: %s", what, len(e.Mismatches),
		plural(len(e.Mismatches), "y", "ies"), strings.Join(parts, "; "))
	if missing {
		has := "the template has"
		if e.Source != "" {
			has = "the OVF has"
		}
		msg += fmt.Sprintf(" (%s: %s)", has, strings.Join(e.Present, ", "))
	}
	return msg
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// CompareProperties checks found against expected (id -> value) and returns a
// *PropertyError with every mismatch, or nil. Properties the config does not
// mention are not checked.
func CompareProperties(template string, found []VAppProperty, expected map[string]string) error {
	have := map[string]string{}
	for _, p := range found {
		// Prefer the CAPI category when an id appears in several product sections.
		if _, dup := have[p.ID]; !dup || p.Category == capiCategory {
			have[p.ID] = p.Value
		}
	}
	e := &PropertyError{Template: template, Present: slices.Sorted(maps.Keys(have))}
	for _, id := range slices.Sorted(maps.Keys(expected)) {
		want := expected[id]
		got, ok := have[id]
		switch {
		case !ok:
			e.Mismatches = append(e.Mismatches, PropertyMismatch{ID: id, Expected: want, Missing: true})
		case got != want:
			e.Mismatches = append(e.Mismatches, PropertyMismatch{ID: id, Expected: want, Found: got})
		}
	}
	if len(e.Mismatches) == 0 {
		return nil
	}
	sort.Slice(e.Mismatches, func(i, j int) bool { return e.Mismatches[i].ID < e.Mismatches[j].ID })
	return e
}

// ValidateProperties reads a template's vApp properties and compares them
// with the expected values from the config.
func (s *Session) ValidateProperties(ctx context.Context, datacenter, template string, expected map[string]string) error {
	props, err := s.TemplateProperties(ctx, datacenter, template)
	if err != nil {
		return err
	}
	return CompareProperties(template, props, expected)
}

// capiCategory is the ProductSection category of the node image properties
// TKG reads (VERSION, KUBERNETES_SEMVER, DISTRO_*).
const capiCategory = "Cluster API Provider (CAPI)"
