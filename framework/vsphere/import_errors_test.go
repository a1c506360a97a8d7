package vsphere_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/framework/vsphere"
	"github.com/tkg-e2e/harness/framework/vsphere/ovagen"
)

// Every broken OVA fails with a message that says what is wrong, and no VM
// of its name is left behind, including when the defect is only found after
// vCenter created the VM (the checksum is known at the disk's last byte).
func TestBrokenOVAsFailClearlyAndLeaveNothing(t *testing.T) {
	s := connect(t)
	for _, c := range []struct {
		brk  ovagen.Breakage
		want []string
	}{
		{ovagen.NotTar, []string{"node-not-tar.ova is not an OVA: reading it as a tar archive failed", "an OVA is a tar holding an .ovf"}},
		{ovagen.NoOVF, []string{"node-no-ovf.ova has no .ovf descriptor; the archive holds: node-no-ovf.mf, node-no-ovf-disk1.vmdk"}},
		{ovagen.MissingDisk, []string{`file "node-missing-disk-disk1.vmdk" referenced by node-missing-disk.ovf (File id "file1") is missing from the archive; the archive holds: node-missing-disk.ovf, node-missing-disk.mf`}},
		{ovagen.NoManifest, []string{"node-no-manifest.ova has no .mf manifest, so its disks cannot be verified"}},
		{ovagen.BadChecksum, []string{"checksum mismatch for node-bad-checksum-disk1.vmdk: the manifest says SHA256", "download it again"}},
		{ovagen.UnsupportedDevice, []string{`vCenter refused to import "node-unsupported-device": unsupported resource type: 99 (OvfUnsupportedType)`}},
	} {
		t.Run(string(c.brk), func(t *testing.T) {
			name := "node-" + string(c.brk)
			ova := writeOVA(t, name, ovagen.Options{Break: c.brk})
			r, err := importOne(t, s, vsphere.OVA{Source: ova.Path}, nil)
			mustContain(t, err, c.want...)
			if r.Action != vsphere.Failed || r.Error == "" {
				t.Errorf("result = %+v, want failed with its error", r)
			}
			if left := leftBehind(t, s, name); len(left) > 0 {
				t.Errorf("%s left VMs behind: %v", c.brk, left)
			}
		})
	}
}

func TestBadChecksumIsAChecksumErrorAndRunStateSaysDeleted(t *testing.T) {
	s := connect(t)
	state, err := run.New(t.TempDir(), "test", "local", "")
	if err != nil {
		t.Fatal(err)
	}
	ova := writeOVA(t, "node-bad-sum-state", ovagen.Options{Break: ovagen.BadChecksum, ManifestAlgorithm: "SHA1"})
	var progress syncBuffer
	in := input(&progress, vsphere.OVA{Source: ova.Path})
	in.Recorder, in.CreatedBy = state, "ova"
	_, err = s.ImportOVAs(context.Background(), in)
	var ce *vsphere.ChecksumError
	if !errors.As(err, &ce) || ce.Algorithm != "SHA1" || ce.File != "node-bad-sum-state-disk1.vmdk" {
		t.Fatalf("want a SHA1 *ChecksumError for the disk, got %v", err)
	}
	if !strings.Contains(progress.String(), "removed the half-imported VM /DC0/vm/node-bad-sum-state") {
		t.Errorf("progress does not report the cleanup:\n%s", progress.String())
	}
	if vm := vmByName(t, s, "node-bad-sum-state"); vm != nil {
		t.Errorf("half-imported VM %s left behind", vm.Self)
	}
	res, ok := state.Resource(vsphere.ResourceKind, "/DC0/vm/node-bad-sum-state")
	if !ok || res.State != "deleted" || res.Attributes["sha256"] != ova.SHA256 || res.CreatedBy != "ova" {
		t.Errorf("run state resource = %+v (found %v), want state deleted with the sha256", res, ok)
	}
}

func TestRunStateRecordsTheTemplateReady(t *testing.T) {
	s := connect(t)
	state, err := run.New(t.TempDir(), "test", "local", "")
	if err != nil {
		t.Fatal(err)
	}
	ova := writeOVA(t, "node-state", ovagen.Options{})
	if _, err := importOne(t, s, vsphere.OVA{Source: ova.Path}, func(in *vsphere.ImportInput) { in.Recorder = state }); err != nil {
		t.Fatal(err)
	}
	res, ok := state.Resource(vsphere.ResourceKind, "/DC0/vm/node-state")
	if !ok || res.State != "ready" || !strings.Contains(res.DeleteHint, "govc vm.destroy") {
		t.Errorf("run state resource = %+v (found %v), want ready with a delete hint", res, ok)
	}
}

func TestWrongPlacementFailsBeforeAnythingIsCreated(t *testing.T) {
	s := connect(t)
	ova := writeOVA(t, "node-placement", ovagen.Options{})
	for name, c := range map[string]struct {
		mod  func(*vsphere.Placement)
		want string
	}{
		"datacenter": {func(p *vsphere.Placement) { p.Datacenter = "DC7" }, `datacenter "DC7" not found; available: DC0`},
		"folder":     {func(p *vsphere.Placement) { p.Folder = "tkg" }, `folder "tkg" not found in datacenter "DC0"; available: /DC0/vm`},
		"datastore":  {func(p *vsphere.Placement) { p.Datastore = "ds9" }, `datastore "ds9" not found in datacenter "DC0"; available: LocalDS_0`},
		"pool":       {func(p *vsphere.Placement) { p.ResourcePool = "" }, "no resource pool set and there are 2"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := importOne(t, s, vsphere.OVA{Source: ova.Path}, func(in *vsphere.ImportInput) { c.mod(&in.Placement) })
			mustContain(t, err, c.want)
			if vm := vmByName(t, s, "node-placement"); vm != nil {
				t.Errorf("VM created despite a bad placement")
			}
		})
	}
}

func TestImportInputIsCheckedFirst(t *testing.T) {
	s := connect(t)
	ova := writeOVA(t, "node-input", ovagen.Options{})
	for name, c := range map[string]struct {
		in   vsphere.ImportInput
		want string
	}{
		"no ovas":    {vsphere.ImportInput{Placement: placement, Timeout: time.Minute}, "no OVAs to import"},
		"no timeout": {vsphere.ImportInput{Placement: placement, OVAs: []vsphere.OVA{{Source: ova.Path}}}, "Timeout must be > 0"},
		"duplicate name": {vsphere.ImportInput{Placement: placement, Timeout: time.Minute,
			OVAs: []vsphere.OVA{{Source: ova.Path}, {Source: "/elsewhere/node-input.ova"}}}, `would both become template "node-input"`},
		"bad sha": {vsphere.ImportInput{Placement: placement, Timeout: time.Minute, OVAs: []vsphere.OVA{{Source: ova.Path, SHA256: "abc"}}},
			`sha256 "abc" is not 64 hex digits`},
		"http without sha": {vsphere.ImportInput{Placement: placement, Timeout: time.Minute, OVAs: []vsphere.OVA{{Source: "http://builds.example/node.ova"}}},
			"OVA http://builds.example/node.ova: an http:// source needs its sha256"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := s.ImportOVAs(context.Background(), c.in)
			mustContain(t, err, "invalid OVA import input", c.want)
		})
	}
}

func TestExpectedSHA256MustMatch(t *testing.T) {
	s := connect(t)
	ova := writeOVA(t, "node-expect", ovagen.Options{})
	wrong := strings.Repeat("0", 64)
	_, err := importOne(t, s, vsphere.OVA{Source: ova.Path, SHA256: wrong}, nil)
	mustContain(t, err, "has sha256 "+ova.SHA256+" but the config expects "+wrong)
	if r, err := importOne(t, s, vsphere.OVA{Source: ova.Path, SHA256: strings.ToUpper(ova.SHA256)}, nil); err != nil || r.Action != vsphere.Imported {
		t.Errorf("matching sha256: %+v, %v", r, err)
	}
}

func TestMissingLocalFile(t *testing.T) {
	s := connect(t)
	_, err := importOne(t, s, vsphere.OVA{Source: "/nonexistent/node.ova"}, nil)
	mustContain(t, err, "OVA /nonexistent/node.ova: open /nonexistent/node.ova: no such file or directory")
}

func TestTruncatedOVA(t *testing.T) {
	s := connect(t)
	ova := writeOVA(t, "node-truncated", ovagen.Options{})
	if err := os.Truncate(ova.Path, ova.Size/2); err != nil {
		t.Fatal(err)
	}
	_, err := importOne(t, s, vsphere.OVA{Source: ova.Path}, nil)
	mustContain(t, err, "node-truncated.ova is truncated: the file ends inside node-truncated-disk1.vmdk", "download the OVA again")
	if vm := vmByName(t, s, "node-truncated"); vm != nil {
		t.Errorf("VM left behind")
	}
}

// cancelOnWrite cancels the import when the first line containing trigger is written.
type cancelOnWrite struct {
	syncBuffer
	trigger string
	cancel  context.CancelFunc
}

func (c *cancelOnWrite) Write(p []byte) (int, error) {
	if strings.Contains(string(p), c.trigger) {
		c.cancel()
	}
	return c.syncBuffer.Write(p)
}

// An interrupted run (Ctrl-C, suite timeout) still removes the VM it was
// creating, whether the cut comes while vCenter prepares the lease (the VM
// exists but ImportVApp returns no reference to it) or mid-upload.
func TestInterruptedImportRemovesTheVM(t *testing.T) {
	s := connect(t)
	ova := writeOVA(t, "node-interrupted", ovagen.Options{Format: ovagen.Raw, DataSize: 64 << 20})
	for _, trigger := range []string{"importing into", "uploading node-interrupted-disk1.vmdk"} {
		t.Run(trigger, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			out := &cancelOnWrite{trigger: trigger, cancel: cancel}
			in := input(nil, vsphere.OVA{Source: ova.Path})
			in.Progress, in.ProgressEvery = out, 5*time.Millisecond
			_, err := s.ImportOVAs(ctx, in)
			mustContain(t, err, "context canceled")
			if left := leftBehind(t, s, "node-interrupted"); len(left) > 0 {
				t.Errorf("interrupted import left VMs %v:\n%s", left, out.String())
			}
			if strings.Contains(trigger, "uploading") && !strings.Contains(out.String(), "removed the half-imported VM /DC0/vm/node-interrupted") {
				t.Errorf("no cleanup reported:\n%s", out.String())
			}
		})
	}
}

// leftBehind names the VMs called name or name.<anything> (an import's temporary VM).
func leftBehind(t *testing.T, s *vsphere.Session, name string) []string {
	t.Helper()
	var out []string
	for _, vm := range vmsWithPrefix(t, s, name) {
		if vm.Name == name || strings.HasPrefix(vm.Name, name+".") {
			out = append(out, vm.Name)
		}
	}
	return out
}
