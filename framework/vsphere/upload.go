package vsphere

import (
	"context"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/vmware/govmomi/nfc"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/ovf/importer"
	"github.com/vmware/govmomi/task"
	"github.com/vmware/govmomi/vim25/types"
)

// upload imports the OVA under the temporary name tmp with govmomi's
// importer (the govc import.ova path) and marks the VM a template. It drives ImportVApp, the uploads and Complete
// itself instead of calling Importer.Import, because Import drops the new
// VM's reference when an upload fails, and an aborted lease leaves that VM
// behind: here it is deleted. The disks go up from one sequential read of
// the OVA (ovaStream), which verifies every file against the manifest and
// also yields the whole-file sha256 when the import wants it and src has
// none yet; the annotation gets the identities the upload verified once it
// is complete.
func (o *ovaImport) upload(ctx context.Context, name, tmp string, src *localOVA, info *OVAInfo, meta *importMeta, res *Result) (*object.VirtualMachine, int64, error) {
	arch := info.archive()
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
		// manifests); the stream verifies every algorithm while reading.
		VerifyManifest: false,
	}
	opts, err := importer.Spec(info.OVFName, arch, false, false)
	if err != nil {
		return nil, 0, err
	}
	opts.Name = &tmp
	opts.Annotation = annotation(identity{SHA256: src.sha256}, o.ova.Source, info.Annotation, meta)
	opts.NetworkMapping = o.networkMapping(info)
	opts.DiskProvisioning = o.in.DiskProvisioning
	if opts.DiskProvisioning == "" {
		opts.DiskProvisioning = string(types.OvfCreateImportSpecParamsDiskProvisioningTypeThin)
	}

	final := path.Join(o.t.Folder.InventoryPath, name)
	tpath := path.Join(o.t.Folder.InventoryPath, tmp)
	o.recordCreating(final, tpath, o.identity(src, info))
	o.rep.printf("importing into %s as %s (datastore %s, pool %s)", o.t.Folder.InventoryPath, tmp, o.t.Datastore.Name(), o.t.ResourcePool.InventoryPath)

	leaseInfo, lease, err := imp.ImportVApp(ctx, info.OVFName, *opts)
	if err != nil {
		o.removeFailedCreate(ctx, tmp)
		o.recordState(final, "deleted")
		return nil, 0, explainImportError(name, err)
	}
	vm := object.NewVirtualMachine(o.s.Vim(), leaseInfo.Entity)
	vm.InventoryPath = tpath
	learn := src.sha256 == "" && o.hashesWhole(info)

	// The progress ticker only starts once the lease is ready: before that nothing moves.
	tr := o.rep.transfer("uploading", diskNames(info), diskBytes(info))
	share := meter.start()
	st, openErr := openStream(ctx, src, info, learn, o.ova.SHA256, share, tr.add)
	if openErr == nil {
		defer st.close()
	}
	stopped := false
	var n int64
	var summary string
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		var took time.Duration
		n, summary, took = tr.finish()
		res.ClientCPU += meter.stop(share)
		if st != nil {
			res.ReadBytes += st.bytesRead()
		}
		if took > 0 {
			res.UploadRate = float64(n) / took.Seconds()
		}
		if learn && st != nil && st.sha256() != "" {
			// The run state learns the sha256 too, even of an OVA that fails.
			src.sha256 = st.sha256()
			o.recordCreating(final, tpath, o.identity(src, info))
		}
	}
	defer stop()

	fail := func(cause error) (*object.VirtualMachine, int64, error) {
		stop()
		if st != nil {
			if v := st.failure(); v != nil {
				cause = v
			}
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
	if openErr != nil {
		return fail(openErr)
	}

	if err := uploadItems(ctx, st, lease, leaseInfo); err != nil {
		return fail(err)
	}
	stop()
	if err := lease.Complete(ctx); err != nil {
		return fail(fmt.Errorf("completing the import lease: %w", err))
	}
	id := o.identity(src, info)
	o.rep.printf("uploaded %s; client CPU %.2fs for %s read, %.2f s/GiB; %s", summary, res.ClientCPU.Seconds(), mib(res.ReadBytes),
		perGiB(res.ClientCPU, res.ReadBytes), id)
	if text := annotation(id, o.ova.Source, info.Annotation, meta); text != opts.Annotation {
		if err := o.annotate(ctx, vm, text); err != nil {
			return fail(fmt.Errorf("writing the OVA identity (%s) into the annotation of %s: %w", id, tpath, err))
		}
	}
	if err := vm.MarkAsTemplate(ctx); err != nil {
		return fail(fmt.Errorf("marking %s as a template: %w", tpath, err))
	}
	return vm, n, nil
}

// annotate writes the annotation once the upload verified the identities it
// names: before that the VM carries only its temporary name, the import's
// run lines and a download's sha256.
func (o *ovaImport) annotate(ctx context.Context, vm *object.VirtualMachine, text string) error {
	t, err := vm.Reconfigure(ctx, types.VirtualMachineConfigSpec{Annotation: text})
	if err != nil {
		return err
	}
	return waitTask(ctx, t, fmt.Sprintf("annotating %s", vmLabel(vm)), o.waits())
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

// uploadItems keeps the lease alive (HttpNfcLeaseProgress) while the stream
// uploads. The uploads bypass Importer.Upload and its progress logger: in
// govmomi v0.56.0 a cancelled context makes progress.reader.Done return
// without closing its channel, and ProgressLogger.Wait then blocks forever,
// so an interrupted run would hang instead of cleaning up. With no Progress
// set, Lease.Upload reports to the lease item, whose consumer (the
// LeaseUpdater started here) also stops on Done and tells vCenter the real
// percentage.
func uploadItems(ctx context.Context, st *ovaStream, lease *nfc.Lease, info *nfc.LeaseInfo) error {
	u := lease.StartUpdater(ctx, info)
	defer u.Done()
	return st.upload(ctx, lease, info.Items)
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
