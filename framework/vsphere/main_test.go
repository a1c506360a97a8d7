package vsphere_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"

	"github.com/tkg-e2e/harness/framework/vsphere"
	"github.com/tkg-e2e/harness/framework/vsphere/ovagen"
	"github.com/tkg-e2e/harness/internal/testutil"
)

// One simulator for the package: it starts in well under a second, but the
// tests are many. Tests use distinct template names so they do not interfere.
var sim *vsphere.Simulator

func TestMain(m *testing.M) {
	var err error
	sim, err = vsphere.StartSimulator()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting vcsim:", err)
		os.Exit(1)
	}
	code := m.Run()
	sim.Close()
	os.Exit(code)
}

func sessionInput() vsphere.SessionInput {
	in := sim.SessionInput()
	in.ConnectTimeout = 5 * time.Second
	return in
}

func connect(t *testing.T) *vsphere.Session {
	t.Helper()
	ctx := context.Background()
	s, err := vsphere.Connect(ctx, sessionInput())
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = s.Close(ctx) })
	return s
}

// placement is the VPX model's: it has two resource pools, so one is named.
var placement = vsphere.Placement{Datacenter: "DC0", Datastore: "LocalDS_0", ResourcePool: "/DC0/host/DC0_C0/Resources", Network: "VM Network"}

func writeOVA(t *testing.T, name string, o ovagen.Options) *ovagen.Result {
	t.Helper()
	o.Name = name
	r, err := ovagen.Write(filepath.Join(t.TempDir(), name+".ova"), o)
	if err != nil {
		t.Fatalf("ovagen: %v", err)
	}
	return r
}

type syncBuffer = testutil.SyncBuffer

func input(progress *syncBuffer, ovas ...vsphere.OVA) vsphere.ImportInput {
	in := vsphere.ImportInput{Placement: placement, OVAs: ovas, Concurrency: 2, Timeout: time.Minute,
		CleanupTimeout: 30 * time.Second, PollInterval: 100 * time.Millisecond, Prefix: "[ova]"}
	if progress != nil {
		in.Progress = progress
	}
	return in
}

func importOne(t *testing.T, s *vsphere.Session, ova vsphere.OVA, mod func(*vsphere.ImportInput)) (vsphere.Result, error) {
	t.Helper()
	in := input(nil, ova)
	if mod != nil {
		mod(&in)
	}
	res, err := s.ImportOVAs(context.Background(), in)
	if len(res) != 1 {
		if err == nil {
			t.Fatalf("want 1 result, got %d", len(res))
		}
		return vsphere.Result{}, err
	}
	return res[0], err
}

// vmByName returns the VM or template with that name anywhere in DC0, or nil.
func vmByName(t *testing.T, s *vsphere.Session, name string) *mo.VirtualMachine {
	t.Helper()
	if vms := dc0VMs(t, s, func(n string) bool { return n == name }); len(vms) > 0 {
		return &vms[0]
	}
	return nil
}

// dc0VMs are the VMs and templates of DC0 whose name match keeps, with
// their name, config and network.
func dc0VMs(t *testing.T, s *vsphere.Session, match func(name string) bool) []mo.VirtualMachine {
	t.Helper()
	ctx := context.Background()
	f := find.NewFinder(s.Vim())
	dc, err := f.Datacenter(ctx, "DC0")
	if err != nil {
		t.Fatal(err)
	}
	f.SetDatacenter(dc)
	vms, err := f.VirtualMachineList(ctx, "*")
	if err != nil {
		t.Fatal(err)
	}
	var out []mo.VirtualMachine
	for _, vm := range vms {
		if !match(vm.Name()) {
			continue
		}
		var m mo.VirtualMachine
		if err := vm.Properties(ctx, vm.Reference(), []string{"name", "config", "network"}, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func mustContain(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want an error containing %q, got nil", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error does not contain %q:\n%v", p, err)
		}
	}
}

func vmObject(s *vsphere.Session, m *mo.VirtualMachine) *object.VirtualMachine {
	return object.NewVirtualMachine(s.Vim(), m.Self)
}
