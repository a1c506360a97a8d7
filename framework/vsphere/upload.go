package vsphere

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/vmware/govmomi/nfc"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/ovf/importer"
	"github.com/vmware/govmomi/task"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// upload imports the OVA under the temporary name tmp with govmomi's
// importer (the govc import.ova path) and marks the VM a template. It drives ImportVApp, the uploads and Complete
// itself instead of calling Importer.Import, because Import drops the new
// VM's reference when an upload fails, and an aborted lease leaves that VM
// behind: here it is deleted.
func (o *ovaImport) upload(ctx context.Context, name, tmp string, src *localOVA, info *OVAInfo, meta *importMeta) (*object.VirtualMachine, int64, error) {
	// Bytes are counted from the start, but the progress ticker only starts
	// once the lease is ready: before that nothing moves.
	var tr *transfer
	arch := info.archive(func(n int) {
		if tr != nil {
			tr.add(n)
		}
	})
	imp := &importer.Importer{
		Name:         tmp,
		Client:       o.s.Vim(),
		Finder:       o.t.Finder,
		Datacenter:   o.t.Datacenter,
		Datastore:    o.t.Datastore,
		ResourcePool: o.t.ResourcePool,
		Folder:       o.t.Folder,
		Archive:      arch,
		Log:          o.libraryLog,
		// The server-side check knows only SHA1 (vcsim refuses SHA256
		// manifests); the archive verifies every algorithm while reading.
		VerifyManifest: false,
	}
	opts, err := importer.Spec(info.OVFName, arch, false, false)
	if err != nil {
		return nil, 0, err
	}
	opts.Name = &tmp
	opts.Annotation = annotation(src.sha256, o.ova.Source, info.Annotation, meta)
	opts.NetworkMapping = o.networkMapping(info)
	opts.DiskProvisioning = o.in.DiskProvisioning
	if opts.DiskProvisioning == "" {
		opts.DiskProvisioning = string(types.OvfCreateImportSpecParamsDiskProvisioningTypeThin)
	}

	final := path.Join(o.t.Folder.InventoryPath, name)
	tpath := path.Join(o.t.Folder.InventoryPath, tmp)
	o.recordCreating(final, tpath, src.sha256)
	o.rep.printf("importing into %s as %s (datastore %s, pool %s)", o.t.Folder.InventoryPath, tmp, o.t.Datastore.Name(), o.t.ResourcePool.InventoryPath)

	leaseInfo, lease, err := imp.ImportVApp(ctx, info.OVFName, *opts)
	if err != nil {
		o.removeFailedCreate(ctx, tmp)
		o.recordState(final, "deleted")
		return nil, 0, explainImportError(name, err)
	}
	vm := object.NewVirtualMachine(o.s.Vim(), leaseInfo.Entity)
	vm.InventoryPath = tpath
	tr = o.rep.transfer("uploading", diskNames(info), diskBytes(info))
	stopped := false
	stop := func() (int64, string) {
		if stopped {
			return 0, ""
		}
		stopped = true
		return tr.finish()
	}
	defer stop()

	fail := func(cause error) (*object.VirtualMachine, int64, error) {
		stop()
		if v := arch.failure(); v != nil {
			cause = v
		}
		cctx, cancel := o.cleanupCtx(ctx)
		defer cancel()
		_ = lease.Abort(cctx, &types.LocalizedMethodFault{Fault: &types.SystemError{Reason: cause.Error()}, LocalizedMessage: cause.Error()})
		if err := o.destroy(cctx, vm); err != nil {
			return nil, 0, fmt.Errorf("%w; removing the half-imported VM %s failed too, delete it by hand: %v", cause, tpath, err)
		}
		o.recordState(final, "deleted")
		o.rep.printf("removed the half-imported VM %s", tpath)
		return nil, 0, cause
	}

	if err := uploadItems(ctx, arch, lease, leaseInfo); err != nil {
		return fail(err)
	}
	n, summary := stop()
	if err := lease.Complete(ctx); err != nil {
		return fail(fmt.Errorf("completing the import lease: %w", err))
	}
	o.rep.printf("uploaded %s", summary)
	if err := vm.MarkAsTemplate(ctx); err != nil {
		return fail(fmt.Errorf("marking %s as a template: %w", tpath, err))
	}
	return vm, n, nil
}

// removeFailedCreate deletes the VM a failed ImportVApp may have created.
// vCenter rolls back a refused spec or lease itself, but a lease wait that
// timed out on our side leaves the VM, and ImportVApp returns no reference.
// It is recognised by its temporary name, which only this import uses.
func (o *ovaImport) removeFailedCreate(ctx context.Context, tmp string) {
	cctx, cancel := o.cleanupCtx(ctx)
	defer cancel()
	ex, err := findByName(cctx, o.s, o.t, tmp)
	if err != nil || ex == nil || !ex.inFolder || ex.template {
		return
	}
	if err := o.destroy(cctx, ex.vm); err != nil {
		o.rep.printf("warning: the failed import left %s and deleting it failed: %v; delete it by hand", ex.path, err)
		return
	}
	o.rep.printf("removed %s, created by the failed import", ex.path)
}

func uploadItems(ctx context.Context, arch *ovaArchive, lease *nfc.Lease, info *nfc.LeaseInfo) error {
	// Keeps the lease alive (HttpNfcLeaseProgress) while disks stream.
	u := lease.StartUpdater(ctx, info)
	defer u.Done()
	for _, item := range info.Items {
		if err := uploadItem(ctx, arch, lease, item); err != nil {
			return fmt.Errorf("uploading %s: %w", item.Path, err)
		}
	}
	return nil
}

// uploadItem is Importer.Upload without its progress logger: in govmomi
// v0.56.0 a cancelled context makes progress.reader.Done return without
// closing its channel, and ProgressLogger.Wait then blocks forever, so an
// interrupted run would hang instead of cleaning up. With no Progress set,
// Lease.Upload reports to the lease item, whose consumer (the LeaseUpdater
// started above) also stops on Done and tells vCenter the real percentage.
func uploadItem(ctx context.Context, arch *ovaArchive, lease *nfc.Lease, item nfc.FileItem) error {
	f, size, err := arch.Open(item.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	return lease.Upload(ctx, item, f, soap.Upload{ContentLength: size})
}

// libraryLog passes the importer's warnings on and drops its carriage-return
// progress, which the reporter replaces with whole lines.
func (o *ovaImport) libraryLog(msg string) (int, error) {
	if strings.HasPrefix(msg, "\r") {
		return len(msg), nil
	}
	if s := strings.TrimSpace(msg); s != "" {
		o.rep.printf("%s", s)
	}
	return len(msg), nil
}

// explainImportError names the template and keeps vCenter's own reason: the
// importer turns an error in CreateImportSpec's result (spec.Error) and a
// failed lease into a task.Error whose message is vCenter's.
func explainImportError(name string, err error) error {
	if te, ok := err.(*task.Error); ok {
		kind := fmt.Sprintf("%T", te.Fault())
		kind = strings.TrimPrefix(kind, "*types.")
		return fmt.Errorf("vCenter refused to import %q: %s (%s)", name, te.LocalizedMessage, kind)
	}
	return fmt.Errorf("importing %q: %w", name, err)
}

func diskBytes(info *OVAInfo) int64 {
	var n int64
	for _, d := range info.Disks {
		n += d.Size
	}
	return n
}

func diskNames(info *OVAInfo) string {
	names := make([]string, 0, len(info.Disks))
	for _, d := range info.Disks {
		names = append(names, path.Base(d.Name))
	}
	return strings.Join(names, ", ")
}
