package vsphere

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
)

// Placement names where templates go, as written in the profile. Names may
// be plain names (LocalDS_0), datacenter-relative paths (vm/tkg) or full
// inventory paths (/DC0/vm/tkg).
type Placement struct {
	Datacenter string
	// Folder for the templates; empty means the datacenter's VM folder.
	Folder    string
	Datastore string
	// ResourcePool is required when the datacenter has more than one (vcsim's
	// VPX model has two: /DC0/host/DC0_H0/Resources and /DC0/host/DC0_C0/Resources).
	ResourcePool string
	// Network is the vSphere network every OVF network is mapped to; empty
	// lets vSphere choose. NetworkMapping overrides it per OVF network name.
	Network        string
	NetworkMapping map[string]string
}

// Target is a resolved Placement.
type Target struct {
	Placement    Placement
	Finder       *find.Finder
	Datacenter   *object.Datacenter
	Folder       *object.Folder
	Datastore    *object.Datastore
	ResourcePool *object.ResourcePool
	// Networks maps each vSphere network name used by the placement to its inventory path.
	Networks map[string]string
}

// NotFoundError says what was asked for, where, and what exists there, e.g.
// `datastore "ds9" not found in datacenter "DC0"; available: LocalDS_0`.
type NotFoundError struct {
	Kind      string
	Name      string
	In        string
	Available []string
}

func (e *NotFoundError) Error() string {
	msg := fmt.Sprintf("%s %q not found", e.Kind, e.Name)
	if e.In != "" {
		msg += " in " + e.In
	}
	if len(e.Available) == 0 {
		return msg + "; none exist"
	}
	return msg + "; available: " + strings.Join(e.Available, ", ")
}

// Resolve looks up every object of the placement. The first one that does
// not exist fails with a NotFoundError listing what does.
func (s *Session) Resolve(ctx context.Context, p Placement) (*Target, error) {
	t, err := s.resolveFolder(ctx, p)
	if err != nil {
		return nil, err
	}
	f := t.Finder
	in := fmt.Sprintf("datacenter %q", t.Datacenter.Name())
	dcPath := t.Datacenter.InventoryPath
	if t.Datastore, err = lookupOrOnly(ctx, "datastore", p.Datastore, in, f.Datastore, func() ([]string, error) {
		return names(f.DatastoreList(ctx, "*"))
	}); err != nil {
		return nil, err
	}
	if t.ResourcePool, err = lookupOrOnly(ctx, "resource pool", p.ResourcePool, in, f.ResourcePool, func() ([]string, error) {
		return paths(f.ResourcePoolList(ctx, dcPath+"/host/..."))
	}); err != nil {
		return nil, err
	}
	nets := []string{}
	if p.Network != "" {
		nets = append(nets, p.Network)
	}
	for _, n := range p.NetworkMapping {
		nets = append(nets, n)
	}
	for _, n := range nets {
		ref, err := lookup(ctx, "network", n, in, f.Network, func() ([]string, error) {
			list, err := f.NetworkList(ctx, "*")
			var out []string
			for _, l := range list {
				out = append(out, l.GetInventoryPath())
			}
			return out, err
		})
		if err != nil {
			return nil, err
		}
		t.Networks[n] = ref.GetInventoryPath()
	}
	return t, nil
}

// resolveFolder resolves the datacenter and the folder only, which is all
// that reading the inventory needs.
func (s *Session) resolveFolder(ctx context.Context, p Placement) (*Target, error) {
	f := find.NewFinder(s.Vim(), false)
	t := &Target{Placement: p, Finder: f, Networks: map[string]string{}}
	var err error
	if t.Datacenter, err = lookupDatacenter(ctx, f, p.Datacenter); err != nil {
		return nil, err
	}
	f.SetDatacenter(t.Datacenter)
	if p.Folder == "" {
		t.Folder, err = f.DefaultFolder(ctx)
		return t, err
	}
	in := fmt.Sprintf("datacenter %q", t.Datacenter.Name())
	t.Folder, err = lookup(ctx, "folder", p.Folder, in, f.Folder, func() ([]string, error) {
		return paths(f.FolderList(ctx, t.Datacenter.InventoryPath+"/vm/..."))
	})
	return t, err
}

func lookupDatacenter(ctx context.Context, f *find.Finder, name string) (*object.Datacenter, error) {
	return lookupOrOnly(ctx, "datacenter", name, "", f.Datacenter, func() ([]string, error) {
		return names(f.DatacenterList(ctx, "*"))
	})
}

// lookupOrOnly is lookup, except that an empty name picks the only object of
// its kind, and asks for a name when there are several.
func lookupOrOnly[T any](ctx context.Context, kind, name, in string, get func(context.Context, string) (T, error), available func() ([]string, error)) (T, error) {
	if name != "" {
		return lookup(ctx, kind, name, in, get, available)
	}
	var zero T
	all, err := available()
	if err != nil && !isNotFound(err) {
		return zero, fmt.Errorf("listing %ss: %w", kind, err)
	}
	switch len(all) {
	case 0:
		return zero, &NotFoundError{Kind: kind, Name: "", In: in}
	case 1:
		return get(ctx, all[0])
	}
	where := ""
	if in != "" {
		where = " in " + in
	}
	return zero, fmt.Errorf("no %s set and there are %d%s: %s; name one in the profile", kind, len(all), where, strings.Join(all, ", "))
}

func lookup[T any](ctx context.Context, kind, name, in string, get func(context.Context, string) (T, error), available func() ([]string, error)) (T, error) {
	obj, err := get(ctx, name)
	if err == nil {
		return obj, nil
	}
	var zero T
	var multi *find.MultipleFoundError
	switch {
	case errors.As(err, &multi):
		return zero, fmt.Errorf("%s %q matches more than one object%s; use the full inventory path", kind, name, inSuffix(in))
	case !isNotFound(err):
		return zero, fmt.Errorf("looking up %s %q%s: %w", kind, name, inSuffix(in), err)
	}
	all, lerr := available()
	if lerr != nil && !isNotFound(lerr) {
		return zero, fmt.Errorf("%s %q not found%s (listing the available ones failed too: %v)", kind, name, inSuffix(in), lerr)
	}
	return zero, &NotFoundError{Kind: kind, Name: name, In: in, Available: all}
}

func inSuffix(in string) string {
	if in == "" {
		return ""
	}
	return " in " + in
}

func isNotFound(err error) bool {
	var nf *find.NotFoundError
	return errors.As(err, &nf)
}

type named interface{ Name() string }

func names[T named](list []T, err error) ([]string, error) {
	out := make([]string, 0, len(list))
	for _, o := range list {
		out = append(out, o.Name())
	}
	sort.Strings(out)
	return out, err
}

// paths lists inventory paths rather than names where names repeat: every
// host and cluster has a pool called "Resources".
func paths[T interface {
	*object.Folder | *object.ResourcePool
}](list []T, err error) ([]string, error) {
	out := make([]string, 0, len(list))
	for _, o := range list {
		switch v := any(o).(type) {
		case *object.Folder:
			out = append(out, v.InventoryPath)
		case *object.ResourcePool:
			out = append(out, v.InventoryPath)
		}
	}
	sort.Strings(out)
	return out, err
}
