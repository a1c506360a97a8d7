package vsphere

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/mo"
)

// Several runs may import into one vCenter at once (CI jobs sharing it), and
// other clusters may be cloning from a template while a run imports. So an
// import never works under the final name: it creates <name>.importing-<run
// hash>.<random>, uploads, marks it a template and only then renames it to
// the final name. A rename that finds the name taken means another run won
// the race: the same OVA (compared as prepare compares, see sameOVA) reuses
// theirs, another is an error. Temporary
// VMs of other runs are left alone unless older than the import timeout.

const (
	importingInfix = ".importing-"
	replacedInfix  = ".replaced-"
	// maxVMName is vSphere's limit on an inventory name.
	maxVMName = 80
)

// activeImports are the temporary names imports of this process are using
// right now, so that a sweep never takes a sibling import of the same run
// for a leftover.
var activeImports sync.Map

func randomSuffix() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// runTag is the run ID as it appears in temporary names: a short hash, as
// run IDs can be long and vSphere names stop at 80 characters. The full ID
// is in the annotation.
func runTag(runID string) string {
	h := sha256.Sum256([]byte(runID))
	return hex.EncodeToString(h[:4])
}

// tempPrefix is what every temporary name for template name starts with.
func tempPrefix(name string) string {
	room := maxVMName - len(importingInfix) - 8 - 1 - 6
	if len(name) > room {
		name = name[:room]
	}
	return name + importingInfix
}

func tempName(name, runID string) string {
	return tempPrefix(name) + runTag(runID) + "." + randomSuffix()
}

func asideName(name string, now time.Time) string {
	suffix := replacedInfix + now.UTC().Format("20060102T150405Z")
	if len(name)+len(suffix) > maxVMName {
		name = name[:maxVMName-len(suffix)]
	}
	return name + suffix
}

type folderVM struct {
	vm         *object.VirtualMachine
	name, path string
	annotation string
}

// tempVMs lists the VMs of the target folder whose name starts with prefix.
func (o *ovaImport) tempVMs(ctx context.Context, prefix string) ([]folderVM, error) {
	m := view.NewManager(o.s.Vim())
	v, err := m.CreateContainerView(ctx, o.t.Folder.Reference(), []string{"VirtualMachine"}, false)
	if err != nil {
		return nil, err
	}
	defer func() { _ = v.Destroy(context.WithoutCancel(ctx)) }()
	var all []mo.VirtualMachine
	if err := v.Retrieve(ctx, []string{"VirtualMachine"}, []string{"name", "config.annotation"}, &all); err != nil {
		return nil, err
	}
	var out []folderVM
	for _, vm := range all {
		if !strings.HasPrefix(vm.Name, prefix) {
			continue
		}
		f := folderVM{vm: object.NewVirtualMachine(o.s.Vim(), vm.Self), name: vm.Name, path: path.Join(o.t.Folder.InventoryPath, vm.Name)}
		if vm.Config != nil {
			f.annotation = vm.Config.Annotation
		}
		f.vm.InventoryPath = f.path
		out = append(out, f)
	}
	return out, nil
}

// sweep removes temporary VMs of this template that are this run's
// leftovers (an earlier attempt of a resumed run) or whose import must have
// ended (older than its timeout: the run that made it died), and reports
// every other one (another run's import in progress) without touching it.
// A failed lookup or deletion is a warning: the import does not need the
// name, only its own temporary one.
func (o *ovaImport) sweep(ctx context.Context, name string, res *Result) {
	vms, err := o.tempVMs(ctx, tempPrefix(name))
	if err != nil {
		o.rep.printf("warning: listing temporary import VMs of %s failed: %v", name, err)
		return
	}
	now := time.Now()
	for _, f := range vms {
		if _, ours := activeImports.Load(f.name); ours {
			continue
		}
		meta := parseImportMeta(f.annotation)
		timeout := max(meta.Timeout, o.in.Timeout)
		var why string
		switch {
		case meta.Run == o.in.RunID && strings.HasPrefix(f.name, tempPrefix(name)+runTag(o.in.RunID)+"."):
			why = "a leftover of an earlier import of this run"
		case !meta.Started.IsZero() && now.Sub(meta.Started) > timeout+o.cleanupTimeout():
			why = fmt.Sprintf("a leftover of run %s, whose import started %s ago, longer than the import timeout %s", meta.Run,
				now.Sub(meta.Started).Round(time.Second), timeout)
		default:
			why := describeImport(meta, now)
			res.LeftAlone = append(res.LeftAlone, f.path+": "+why)
			o.rep.printf("leaving %s alone: %s", f.path, why)
			continue
		}
		o.rep.printf("removing %s, %s", f.path, why)
		if err := o.destroy(ctx, f.vm); err != nil {
			o.rep.printf("warning: %v; delete it by hand", err)
			continue
		}
		res.Removed = append(res.Removed, f.path)
	}
}

func describeImport(m importMeta, now time.Time) string {
	if m.Run == "" || m.Started.IsZero() {
		return "a temporary import VM without the harness's run and start annotation (not touched; delete it by hand if it is stale)"
	}
	return fmt.Sprintf("another run's import in progress (run %s, started %s ago, timeout %s)", m.Run,
		now.Sub(m.Started).Round(time.Second), m.Timeout)
}

// finish gives the finished template (under its temporary name) the final
// name; with Replace it first renames the old template aside and keeps it.
func (o *ovaImport) finish(ctx context.Context, vm *object.VirtualMachine, name string, src *localOVA, info *OVAInfo, action Action, old *existingVM, res *Result) error {
	folder := o.t.Folder.InventoryPath
	final := path.Join(folder, name)
	tmp := vm.InventoryPath
	removeOurs := func(cause error) error {
		cctx, cancel := o.cleanupCtx(ctx)
		defer cancel()
		if err := o.destroy(cctx, vm); err != nil {
			return fmt.Errorf("%w; removing this run's copy %s failed too, delete it by hand: %v", cause, tmp, err)
		}
		o.rep.printf("removed this run's copy %s", tmp)
		o.recordState(final, "deleted")
		return cause
	}
	if action == Replaced {
		// Another run may have replaced it meanwhile: then the name's holder decides, as below.
		if cur, err := old.vm.ObjectName(ctx); err == nil && cur != name {
			o.rep.printf("the template this run was to replace was renamed to %s meanwhile (another run replacing it?)", cur)
			action = Imported
		}
	}
	if action == Replaced {
		aside := asideName(name, time.Now())
		if err := o.rename(ctx, old.vm, aside); err != nil {
			return removeOurs(fmt.Errorf("renaming the old template %s aside to %s: %w; it is unchanged", old.path, aside, err))
		}
		res.Kept = path.Join(folder, aside)
		o.rep.printf("renamed the old template %s to %s; it is kept (clones that refer to it keep working): delete it by hand when nothing uses it", old.path, res.Kept)
	}
	if beforeRename != nil {
		beforeRename(name)
	}
	err := o.rename(ctx, vm, name)
	if err == nil {
		vm.InventoryPath = final
		o.recordState(final, "ready")
		return nil
	}
	if action == Replaced {
		// Put the old template back under its name, so nothing changed.
		cctx, cancel := o.cleanupCtx(ctx)
		defer cancel()
		if rerr := o.rename(cctx, old.vm, name); rerr != nil {
			return removeOurs(fmt.Errorf("renaming %s to %s: %w; the old template stays at %s (renaming it back failed: %v)", tmp, name, err, res.Kept, rerr))
		}
		res.Kept = ""
		return removeOurs(fmt.Errorf("renaming %s to %s: %w; the old template was renamed back", tmp, name, err))
	}
	// The name was free when this import started: did another run take it?
	ex, ferr := findByName(ctx, o.s, o.t, name)
	if ferr != nil || ex == nil {
		return removeOurs(fmt.Errorf("renaming the imported template %s to %s: %w", tmp, name, err))
	}
	same, basis := false, ""
	if ex.inFolder && ex.template {
		if same, basis, ferr = o.sameOVA(ctx, ex.id, src, info, res); ferr != nil {
			return removeOurs(fmt.Errorf("renaming the imported template %s to %s: %w; comparing it with the template that took the name failed: %v", tmp, name, err, ferr))
		}
	}
	switch {
	case same:
		o.rep.printf("another run imported %s from the same OVA (%s %s) meanwhile: reusing it", ex.path, basis, o.identity(src, info).on(basis))
		cctx, cancel := o.cleanupCtx(ctx)
		defer cancel()
		if err := destroyVM(cctx, vm, o.waits()); err != nil {
			o.rep.printf("warning: removing this run's copy %s failed, delete it by hand: %v", tmp, err)
		} else {
			o.rep.printf("removed this run's copy %s", tmp)
		}
		o.recordState(final, "deleted")
		res.Action, res.Path, res.Ref, res.Bytes = Reused, ex.path, ex.vm.Reference(), 0
		return nil
	default:
		kind := "template"
		if !ex.template {
			kind = "VM (not a template)"
		}
		return removeOurs(fmt.Errorf("while this run imported %s (%s), a %s of that name appeared at %s with %s (another run imported another OVA under the name?); "+
			"this run's copy is removed: check which OVA the name should carry", name, o.identity(src, info), kind, ex.path, ex.id))
	}
}

// beforeRename, when set (by tests), runs just before the final rename.
var beforeRename func(name string)

func (o *ovaImport) rename(ctx context.Context, vm *object.VirtualMachine, name string) error {
	t, err := vm.Rename(ctx, name)
	if err != nil {
		return err
	}
	return waitTask(ctx, t, fmt.Sprintf("renaming %s to %s", vmLabel(vm), name), o.waits())
}
