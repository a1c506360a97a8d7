package vsphere_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/tkg-e2e/harness/framework/vsphere"
	"github.com/tkg-e2e/harness/framework/vsphere/ovagen"
)

var uniqN atomic.Int32

// uniq makes a template name no earlier run of the test (go test -count=N
// shares one simulator) has used.
func uniq(base string) string { return fmt.Sprintf("%s-%d", base, uniqN.Add(1)) }

// vmsWithPrefix lists the VMs and templates of DC0 whose name starts with prefix.
func vmsWithPrefix(t *testing.T, s *vsphere.Session, prefix string) []mo.VirtualMachine {
	t.Helper()
	return dc0VMs(t, s, func(name string) bool { return strings.HasPrefix(name, prefix) })
}

// Two runs import the same OVA into one vCenter at the same time. Both
// upload under their own temporary name (held at the final rename until
// both are there, so the race is certain), one takes the name, the other
// finds it taken by a template of the same sha256, removes only its own copy
// and reuses the winner's.
func TestTwoRunsImportingTheSameOVAAtOnceBothSucceed(t *testing.T) {
	s := connect(t)
	name := uniq("node-race")
	ova := writeOVA(t, name, ovagen.Options{DataSize: 4 << 20})
	arrived := make(chan struct{}, 2)
	release := make(chan struct{})
	var once sync.Once
	releaseAll := func() { once.Do(func() { close(release) }) }
	defer releaseAll()
	defer vsphere.SetBeforeRename(func(n string) {
		if n == name {
			arrived <- struct{}{}
			<-release
		}
	})()

	var progress syncBuffer
	results := make([]vsphere.Result, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, run := range []string{"run-a", "run-b"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := input(&progress, vsphere.OVA{Source: ova.Path})
			in.RunID = run
			res, err := s.ImportOVAs(context.Background(), in)
			errs[i] = err
			if len(res) == 1 {
				results[i] = res[0]
			}
		}()
	}
	for range 2 {
		select {
		case <-arrived:
		case <-time.After(30 * time.Second):
			releaseAll()
			wg.Wait()
			t.Fatalf("both imports did not reach the rename: %v\n%s", errs, progress.String())
		}
	}
	// Both uploads are complete, neither has the name yet, neither removed the other's VM.
	temps := vmsWithPrefix(t, s, name+".importing-")
	if len(temps) != 2 || vmByName(t, s, name) != nil {
		t.Errorf("at the rename: %d temporary VMs (want 2), final name taken: %v", len(temps), vmByName(t, s, name) != nil)
	}
	for _, run := range []string{"run-a", "run-b"} {
		found := false
		for _, vm := range temps {
			found = found || (strings.HasPrefix(vm.Name, name+".importing-"+vsphere.RunTag(run)+".") &&
				strings.Contains(vm.Config.Annotation, "ova-import-run: "+run+"\n") && vm.Config.Template)
		}
		if !found {
			t.Errorf("no finished temporary template of %s among %d", run, len(temps))
		}
	}
	releaseAll()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("import %d: %v\n%s", i, err, progress.String())
		}
	}
	actions := []vsphere.Action{results[0].Action, results[1].Action}
	if !(actions[0] == vsphere.Imported && actions[1] == vsphere.Reused || actions[0] == vsphere.Reused && actions[1] == vsphere.Imported) {
		t.Errorf("actions %v, want one imported and one reused", actions)
	}
	if results[0].Ref != results[1].Ref || results[0].Path != "/DC0/vm/"+name || results[1].Path != "/DC0/vm/"+name {
		t.Errorf("results name different templates: %+v / %+v", results[0], results[1])
	}
	all := vmsWithPrefix(t, s, name)
	if len(all) != 1 || all[0].Name != name || !all[0].Config.Template || all[0].Self != results[0].Ref {
		var names []string
		for _, vm := range all {
			names = append(names, vm.Name)
		}
		t.Errorf("want exactly one template %s, got %v", name, names)
	}
	mustContain(t, errString(progress.String()), "another run imported /DC0/vm/"+name+" from the same OVA", "removed this run's copy /DC0/vm/"+name+".importing-")
}

// makeTempVM creates what another run's import looks like while it runs.
func makeTempVM(t *testing.T, s *vsphere.Session, name, run string, started time.Time, timeout time.Duration) {
	t.Helper()
	ctx := context.Background()
	tg, err := s.Resolve(ctx, placement)
	if err != nil {
		t.Fatal(err)
	}
	ann := fmt.Sprintf("Imported by the tkg-e2e harness.\nova-sha256: %s\nova: x.ova\nova-import-run: %s\nova-import-started: %s\nova-import-timeout: %s\n",
		strings.Repeat("a", 64), run, started.UTC().Format(time.RFC3339), timeout)
	spec := types.VirtualMachineConfigSpec{Name: name, Annotation: ann, GuestId: "otherGuest64",
		Files: &types.VirtualMachineFileInfo{VmPathName: "[LocalDS_0]"}}
	task, err := tg.Folder.CreateVM(ctx, spec, tg.ResourcePool, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := task.WaitForResult(ctx); err != nil {
		t.Fatalf("creating %s: %v", name, err)
	}
}

// Temporary VMs near the name: another run's import younger than the
// timeout is left alone and reported; a dead run's (older than the timeout)
// and this run's own leftover are removed.
func TestTemporaryVMsOfOtherRunsAreLeftAloneUntilTimedOut(t *testing.T) {
	s := connect(t)
	name := uniq("node-stale")
	ova := writeOVA(t, name, ovagen.Options{})
	busy := name + ".importing-" + vsphere.RunTag("other-run") + ".111111"
	dead := name + ".importing-" + vsphere.RunTag("dead-run") + ".222222"
	mine := name + ".importing-" + vsphere.RunTag("this-run") + ".333333"
	makeTempVM(t, s, busy, "other-run", time.Now().Add(-time.Minute), 30*time.Minute)
	makeTempVM(t, s, dead, "dead-run", time.Now().Add(-3*time.Hour), time.Hour)
	makeTempVM(t, s, mine, "this-run", time.Now().Add(-time.Minute), time.Hour)

	var progress syncBuffer
	r, err := importOne(t, s, vsphere.OVA{Source: ova.Path}, func(in *vsphere.ImportInput) { in.RunID, in.Progress = "this-run", &progress })
	if err != nil {
		t.Fatal(err)
	}
	if r.Action != vsphere.Imported {
		t.Errorf("action %s, want imported", r.Action)
	}
	if vmByName(t, s, busy) == nil {
		t.Fatalf("another run's import in progress was removed:\n%s", progress.String())
	}
	if len(r.LeftAlone) != 1 || !strings.HasPrefix(r.LeftAlone[0], "/DC0/vm/"+busy+": another run's import in progress (run other-run, started 1m") {
		t.Errorf("left alone = %q", r.LeftAlone)
	}
	for _, gone := range []string{dead, mine} {
		if vmByName(t, s, gone) != nil {
			t.Errorf("%s was not removed", gone)
		}
	}
	if strings.Join(r.Removed, ",") != "/DC0/vm/"+dead+",/DC0/vm/"+mine && strings.Join(r.Removed, ",") != "/DC0/vm/"+mine+",/DC0/vm/"+dead {
		t.Errorf("removed = %q", r.Removed)
	}
	mustContain(t, errString(progress.String()), "leaving /DC0/vm/"+busy+" alone: another run's import in progress (run other-run, started 1m",
		"removing /DC0/vm/"+dead+", a leftover of run dead-run, whose import started 3h0m", "ago, longer than the import timeout 1h0m0s",
		"removing /DC0/vm/"+mine+", a leftover of an earlier import of this run")
}

// counting counts SOAP calls, to show a check happened before any vCenter call.
type counting struct {
	soap.RoundTripper
	n atomic.Int32
}

func (c *counting) RoundTrip(ctx context.Context, req, res soap.HasFault) error {
	c.n.Add(1)
	return c.RoundTripper.RoundTrip(ctx, req, res)
}

func countCalls(s *vsphere.Session) *counting {
	c := &counting{RoundTripper: s.Client.Client.RoundTripper}
	s.Client.Client.RoundTripper = c
	return c
}

// The OVA's vApp properties are read from the OVF descriptor inside it and
// checked before anything is uploaded: a mismatch names every property, and
// vCenter was not called at all.
func TestPropertyMismatchFailsBeforeAnyUpload(t *testing.T) {
	s := connect(t)
	calls := countCalls(s)
	name := uniq("node-wrong-props")
	ova := writeOVA(t, name, ovagen.Options{})
	want := ovagen.DefaultProperties()
	want["KUBERNETES_SEMVER"] = "v1.32.0+vmware.1"
	want["DISTRO_NAME"] = "photon"
	want["IMAGE_TYPE"] = "node"
	_, err := importOne(t, s, vsphere.OVA{Source: ova.Path, Properties: want}, nil)
	mustContain(t, err, "OVA "+name+".ova ("+name+".ovf): 3 vApp properties do not match the config",
		`DISTRO_NAME: expected "photon", found "ubuntu"`,
		`KUBERNETES_SEMVER: expected "v1.32.0+vmware.1", found "v1.33.1+vmware.1"`,
		`IMAGE_TYPE: expected "node", property missing`, "the OVF has: DISTRO_ARCH", "nothing was uploaded")
	if n := calls.n.Load(); n != 0 {
		t.Errorf("%d vCenter calls before the property check failed; want none", n)
	}
	if vmByName(t, s, name) != nil || len(vmsWithPrefix(t, s, name)) != 0 {
		t.Error("a VM was created")
	}
	// The same OVA with matching properties imports.
	if _, err := importOne(t, s, vsphere.OVA{Source: ova.Path, Properties: ovagen.DefaultProperties()}, nil); err != nil {
		t.Fatal(err)
	}
}
