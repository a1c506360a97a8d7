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
	s   *Session
	t   *Target
	in  *ImportInput
	ova OVA
	rep *reporter
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
		if res.Err != nil {
			res.Action = Failed
			res.Error = res.Err.Error()
			o.rep.printf("FAILED after %s: %v", res.Duration.Round(10*time.Millisecond), res.Err)
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, o.in.Timeout)
	defer cancel()

	src, err := fetch(ctx, o.ova.Source, o.in.DownloadDir, o.rep)
	if err != nil {
		res.Err = o.timeoutOr(ctx, err)
		return res
	}
	defer src.cleanup()
	res.SHA256 = src.sha256
	o.rep.printf("%s is %s, sha256 %s", res.Source, mib(src.size), src.sha256)
	if o.ova.SHA256 != "" && !strings.EqualFold(o.ova.SHA256, src.sha256) {
		res.Err = fmt.Errorf("OVA %s has sha256 %s but the config expects %s: wrong or corrupt download", res.Source, src.sha256, strings.ToLower(o.ova.SHA256))
		return res
	}
	info, err := InspectOVA(src.path, o.in.AllowMissingManifest)
	if err != nil {
		res.Err = err
		return res
	}
	if err := o.checkNetworks(info); err != nil {
		res.Err = err
		return res
	}

	action, err := o.prepare(ctx, name, src.sha256, &res)
	if err != nil || action == Reused {
		res.Err = o.timeoutOr(ctx, err)
		return res
	}
	ref, n, err := o.upload(ctx, name, src, info)
	if err != nil {
		res.Err = o.timeoutOr(ctx, err)
		return res
	}
	res.Action, res.Ref, res.Bytes = action, ref, n
	res.Path = path.Join(o.t.Folder.InventoryPath, name)
	o.rep.printf("%s as template %s in %s", action, res.Path, time.Since(start).Round(10*time.Millisecond))
	return res
}

// prepare applies the idempotency rules to a same-named VM, if there is one,
// and returns what the import will be: Imported, Reused or Replaced.
func (o *ovaImport) prepare(ctx context.Context, name, sha string, res *Result) (Action, error) {
	ex, err := findByName(ctx, o.s, o.t, name)
	if err != nil || ex == nil {
		return Imported, err
	}
	folder := o.t.Folder.InventoryPath
	switch {
	case !ex.inFolder:
		return "", fmt.Errorf("a VM named %q already exists at %s, outside the target folder %s; "+
			"the harness does not touch it: pick another template name or remove it", name, ex.path, folder)
	case ex.template && ex.sha256 == sha:
		res.Action, res.Path, res.Ref = Reused, ex.path, ex.vm.Reference()
		o.rep.printf("reusing template %s: it was imported from the same OVA (sha256 %s)", ex.path, sha)
		return Reused, nil
	case !ex.template && ex.sha256 != "":
		// Only this package writes the sha line, and only marks the VM a template
		// once the upload completed: this is the leftover of an interrupted import.
		o.rep.printf("removing %s, a leftover of an interrupted import (a VM, not a template)", ex.path)
		return Imported, o.destroy(ctx, ex.vm)
	case !ex.template:
		return "", fmt.Errorf("a VM (not a template) named %q already exists at %s and was not imported by the harness; "+
			"remove or rename it, or pick another template name", name, ex.path)
	case !o.in.Replace:
		found := "no OVA sha256 in its annotation"
		if ex.sha256 != "" {
			found = "sha256 " + ex.sha256
		}
		return "", fmt.Errorf("template %s already exists with %s, but %s has sha256 %s: it was imported from another OVA; "+
			"set replace: true to delete and re-import it, or give this OVA another template name", ex.path, found, res.Source, sha)
	}
	o.rep.printf("replacing template %s (sha256 %s) with the OVA's (sha256 %s)", ex.path, orNone(ex.sha256), sha)
	return Replaced, o.destroy(ctx, ex.vm)
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
	for ovfNet := range o.t.Placement.NetworkMapping {
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
// an interrupted run leaves a state file that says what may exist.
func (o *ovaImport) recordCreating(path, sha string) {
	if o.in.Recorder == nil {
		return
	}
	r := run.Resource{Kind: ResourceKind, Name: path, State: "creating", CreatedBy: o.in.CreatedBy,
		DeleteHint: fmt.Sprintf("govc vm.destroy -dc=%q %q", o.t.Datacenter.Name(), path),
		Attributes: map[string]string{"sha256": sha, "server": o.s.URL.String(), "source": displaySource(o.ova.Source)}}
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

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
