package vsphere

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/ovf/importer"

	"github.com/tkg-e2e/harness/framework/run"
)

// ovaImport is the import of one OVA; ImportOVAs makes one per OVA.
type ovaImport struct {
	s       *Session
	resolve func() (*Target, error)
	t       *Target
	dl      *Downloads
	in      *ImportInput
	ova     OVA
	rep     *reporter
}

func (o *ovaImport) waits() taskWaits {
	return taskWaits{Timeout: o.cleanupTimeout(), Interval: o.in.PollInterval, Progress: o.in.Progress, Prefix: o.in.Prefix}
}

func (o *ovaImport) cleanupTimeout() time.Duration {
	if o.in.CleanupTimeout > 0 {
		return o.in.CleanupTimeout
	}
	return 2 * time.Minute
}

// cleanupCtx outlives a cancelled or timed-out import, so that what the
// import created is still removed.
func (o *ovaImport) cleanupCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), o.cleanupTimeout())
}

func (o *ovaImport) run(ctx context.Context) (res Result) {
	start := time.Now()
	name := o.ova.TemplateName()
	res = Result{Name: name, Source: displaySource(o.ova.Source), Action: Failed}
	defer func() {
		res.Duration = time.Since(start)
		res.CPUPerGiB = perGiB(res.ClientCPU, res.ReadBytes)
		if res.Err != nil {
			res.Action = Failed
			res.Error = res.Err.Error()
			o.rep.printf("FAILED after %s: %v", res.Duration.Round(10*time.Millisecond), res.Err)
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, o.in.Timeout)
	defer cancel()

	// Everything that can be checked without reading the whole OVA is checked
	// before vCenter is asked anything; the bytes themselves are read at most
	// once, later, by whichever of the hash pass or the upload the import
	// needs (neither, for a reuse decided on the manifest identity).
	src, err := fetch(ctx, o.ova.Source, o.dl, o.rep)
	if err != nil {
		res.Err = o.timeoutOr(ctx, err)
		return res
	}
	defer src.cleanup()
	// A private copy: this import may fill in the sha256 of a local file,
	// while a download's is shared with the run's other imports of the URL.
	own := *src
	src = &own
	if src.sha256 != "" {
		res.SHA256 = src.sha256
		o.rep.printf("%s is %s, sha256 %s", res.Source, mib(src.size), src.sha256)
		if err := o.checkExpected(src.sha256, "nothing was sent to vCenter"); err != nil {
			res.Err = err
			return res
		}
	} else {
		o.rep.printf("%s is %s", res.Source, mib(src.size))
	}
	info, err := InspectOVA(src.path, o.in.AllowMissingManifest)
	if err != nil {
		res.Err = err
		return res
	}
	res.ManifestSHA256 = info.ManifestSHA256
	o.rep.printf("%s", o.describeIdentity(src, info))
	if len(o.ova.Properties) > 0 {
		if err := CompareProperties(name, info.vappProperties(), o.ova.Properties); err != nil {
			if pe, ok := err.(*PropertyError); ok {
				pe.Source = fmt.Sprintf("OVA %s (%s)", sourceBase(o.ova.Source), info.OVFName)
			}
			res.Err = fmt.Errorf("%w; nothing was uploaded: fix ova.images[].properties or use the right OVA", err)
			return res
		}
	}
	if err := o.checkNetworks(info); err != nil {
		res.Err = err
		return res
	}

	if o.t, err = o.resolve(); err != nil {
		res.Err = err
		return res
	}
	action, ex, err := o.prepare(ctx, name, src, info, &res)
	if err != nil || action == Reused {
		res.Err = o.timeoutOr(ctx, err)
		return res
	}
	o.sweep(ctx, name, &res)
	tmp := tempName(name, o.in.RunID)
	activeImports.Store(tmp, true)
	defer activeImports.Delete(tmp)
	meta := &importMeta{Run: o.in.RunID, Started: time.Now(), Timeout: o.in.Timeout}
	vm, n, err := o.upload(ctx, name, tmp, src, info, meta, &res)
	res.SHA256 = src.sha256
	if err != nil {
		res.Err = o.timeoutOr(ctx, err)
		return res
	}
	if err := o.finish(ctx, vm, name, src, info, action, ex, &res); err != nil {
		res.Err = o.timeoutOr(ctx, err)
		return res
	}
	if res.Action == Reused {
		return res
	}
	res.Action, res.Ref, res.Bytes = action, vm.Reference(), n
	res.Path = path.Join(o.t.Folder.InventoryPath, name)
	o.rep.printf("%s as template %s in %s", action, res.Path, time.Since(start).Round(10*time.Millisecond))
	return res
}

// checkExpected compares a whole-OVA sha256 with the one the config expects.
func (o *ovaImport) checkExpected(sha, consequence string) error {
	if o.ova.SHA256 != "" && !strings.EqualFold(o.ova.SHA256, sha) {
		return fmt.Errorf("OVA %s has sha256 %s but the config expects %s: wrong or corrupt download (%s)",
			displaySource(o.ova.Source), sha, strings.ToLower(o.ova.SHA256), consequence)
	}
	return nil
}

// learnSHA256 is the hash pass of an OVA that may not be uploaded at all (a
// template of its name exists, and the config's sha256 is to be checked or
// the template has only the whole-file identity); a download already knows
// its sha256.
func (o *ovaImport) learnSHA256(ctx context.Context, src *localOVA, res *Result) (string, error) {
	if src.sha256 != "" {
		return src.sha256, nil
	}
	t0 := time.Now()
	share := meter.start()
	sha, err := hashFile(ctx, src.path, share)
	cpu := meter.stop(share)
	res.ReadBytes += share.bytes.Load()
	res.ClientCPU += cpu
	if err != nil {
		return "", err
	}
	took := time.Since(t0)
	o.rep.printf("hashed %s in %s (%s/s, client CPU %.2f s/GiB) to compare with the template of that name: sha256 %s",
		mib(src.size), took.Round(10*time.Millisecond), mib(int64(float64(src.size)/took.Seconds())), perGiB(cpu, src.size), sha)
	src.sha256, res.SHA256 = sha, sha
	return sha, o.checkExpected(sha, "nothing was uploaded")
}

// prepare applies the idempotency rules to a same-named VM, if there is one,
// and returns what the import will be: Imported, Reused or Replaced (with the
// template to rename aside). It deletes nothing: an import runs under a
// temporary name and only a finished template takes the final name, so a
// same-named VM that is not a template is no import in progress of this
// harness and is not the harness's to remove. The OVA is hashed here only
// when a template of the name exists and either the config gives a sha256
// (checked before anything else happens, as it always was) or the template
// carries only the whole-file sha256; a template with a manifest identity
// is compared with the OVA's manifest, which was read at inspection. With no
// template the upload's read yields what is still to learn, and with a VM
// of the name that is no template the answer is an error whatever the
// bytes are.
func (o *ovaImport) prepare(ctx context.Context, name string, src *localOVA, info *OVAInfo, res *Result) (Action, *existingVM, error) {
	ex, err := findByName(ctx, o.s, o.t, name)
	if err != nil || ex == nil {
		return Imported, nil, err
	}
	folder := o.t.Folder.InventoryPath
	switch {
	case !ex.inFolder:
		return "", nil, fmt.Errorf("a VM named %q already exists at %s, outside the target folder %s; "+
			"the harness does not touch it: pick another template name or remove it", name, ex.path, folder)
	case !ex.template && ex.id.known():
		return "", nil, fmt.Errorf("a VM (not a template) named %q exists at %s and carries the harness's OVA identity annotation: "+
			"the leftover of an import by an older harness version, or a template someone turned into a VM. "+
			"The harness does not delete it (it may be in use): check, then delete or rename it by hand", name, ex.path)
	case !ex.template:
		return "", nil, fmt.Errorf("a VM (not a template) named %q already exists at %s and was not imported by the harness; "+
			"remove or rename it, or pick another template name", name, ex.path)
	}
	if o.ova.SHA256 != "" {
		if _, err := o.learnSHA256(ctx, src, res); err != nil {
			return "", nil, err
		}
	}
	same, basis, err := o.sameOVA(ctx, ex.id, src, info, res)
	if err != nil {
		return "", nil, err
	}
	ours := o.identity(src, info)
	if same {
		res.Action, res.Path, res.Ref = Reused, ex.path, ex.vm.Reference()
		o.rep.printf("reusing template %s: it was imported from the same OVA (%s %s)", ex.path, basis, ours.on(basis))
		return Reused, nil, nil
	}
	if !o.in.Replace {
		return "", nil, fmt.Errorf("%s; set replace: true to import this one under the name (the old template is renamed aside and kept), "+
			"or give this OVA another template name", otherOVA(ex.path, ex.id, ours, basis, res.Source))
	}
	o.rep.printf("replacing template %s (%s) with the OVA's (%s); the old one will be renamed aside and kept", ex.path, ex.id, ours)
	return Replaced, ex, nil
}

func (o *ovaImport) destroy(ctx context.Context, vm *object.VirtualMachine) error {
	if err := destroyVM(ctx, vm, o.waits()); err != nil {
		return fmt.Errorf("deleting %s: %w", vmLabel(vm), err)
	}
	o.recordState(vm.InventoryPath, "deleted")
	return nil
}

// checkNetworks rejects a mapping for a network the OVF does not have; the
// importer would only log a warning and leave the NIC on the default network.
func (o *ovaImport) checkNetworks(info *OVAInfo) error {
	for ovfNet := range o.in.Placement.NetworkMapping {
		found := false
		for _, n := range info.Networks {
			found = found || n == ovfNet
		}
		if !found {
			return fmt.Errorf("network mapping names OVF network %q, but %s defines: %s",
				ovfNet, path.Base(o.ova.Source), strings.Join(info.Networks, ", "))
		}
	}
	return nil
}

func (o *ovaImport) networkMapping(info *OVAInfo) []importer.Network {
	var nets []importer.Network
	for _, n := range info.Networks {
		target := o.t.Placement.Network
		if m, ok := o.t.Placement.NetworkMapping[n]; ok {
			target = m
		}
		if target == "" {
			continue
		}
		nets = append(nets, importer.Network{Name: n, Network: o.t.Networks[target]})
	}
	return nets
}

func (o *ovaImport) timeoutOr(ctx context.Context, err error) error {
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("import of %s did not finish within %s (raise the ova import timeout in the config): %w",
			displaySource(o.ova.Source), o.in.Timeout, err)
	}
	return err
}

// recordCreating puts the template into the run state before it exists, so
// an interrupted run leaves a state file that says what may exist: the
// temporary VM, until it is renamed to path.
func (o *ovaImport) recordCreating(path, tmp string, id identity) {
	if o.in.Recorder == nil {
		return
	}
	r := run.Resource{Kind: ResourceKind, Name: path, State: "creating", CreatedBy: o.in.CreatedBy,
		DeleteHint: fmt.Sprintf("govc vm.destroy -dc=%q %q (while importing it is %q)", o.t.Datacenter.Name(), path, tmp),
		Attributes: map[string]string{"sha256": id.SHA256, "server": o.s.URL.String(), "source": displaySource(o.ova.Source), "importingAs": tmp, "run": o.in.RunID}}
	if id.Manifest != "" {
		r.Attributes["manifestSha256"] = id.Manifest
	}
	if err := o.in.Recorder.PutResource(r); err != nil {
		o.rep.printf("warning: recording %s in the run state failed: %v", path, err)
	}
}

// recordState updates a template this run recorded; templates from earlier
// runs are not in this run's state and are left alone.
func (o *ovaImport) recordState(path, state string) {
	if o.in.Recorder == nil {
		return
	}
	_ = o.in.Recorder.SetResourceState(run.Resource{Kind: ResourceKind, Name: path}.Key(), state)
}
