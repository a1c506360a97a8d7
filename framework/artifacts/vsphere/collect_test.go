package vsphere_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
	"sigs.k8s.io/yaml"

	"github.com/tkg-e2e/harness/framework/artifacts"
	"github.com/tkg-e2e/harness/framework/artifacts/artifactstest"
	"github.com/tkg-e2e/harness/framework/artifacts/leakcheck"
	"github.com/tkg-e2e/harness/framework/artifacts/vsphere"
)

const (
	vcUser     = "administrator@vsphere.local"
	vcPassword = "Vc$im-P@ss<2024>&"
)

// vcsim is a real SOAP endpoint (govmomi's simulator, VPX model) that only
// accepts vcUser/vcPassword, prepared the way a run leaves a vCenter: a run
// folder with two VMs, a template outside it with vApp properties, and a
// task that failed.
func vcsim(t *testing.T) (*simulator.Server, time.Time) {
	t.Helper()
	model := simulator.VPX()
	if err := model.Create(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(model.Remove)
	model.Service.Listen = &url.URL{User: url.UserPassword(vcUser, vcPassword)}
	s := model.Service.NewServer()
	t.Cleanup(s.Close)
	start := time.Now().Add(-time.Minute)

	ctx := context.Background()
	c, err := govmomi.NewClient(ctx, s.URL, true)
	must(t, err)
	f := find.NewFinder(c.Client, true)
	dc, err := f.DefaultDatacenter(ctx)
	must(t, err)
	f.SetDatacenter(dc)
	folders, err := dc.Folders(ctx)
	must(t, err)
	run, err := folders.VmFolder.CreateFolder(ctx, "run-42")
	must(t, err)
	var refs []types.ManagedObjectReference
	for _, name := range []string{"DC0_H0_VM0", "DC0_H0_VM1"} {
		vm, err := f.VirtualMachine(ctx, name)
		must(t, err)
		refs = append(refs, vm.Reference())
	}
	task, err := run.MoveInto(ctx, refs)
	must(t, err)
	must(t, task.Wait(ctx))

	tmpl, err := f.VirtualMachine(ctx, "DC0_C0_RP0_VM0")
	must(t, err)
	add := types.ArrayUpdateSpec{Operation: types.ArrayUpdateOperationAdd}
	yes := true
	spec := types.VirtualMachineConfigSpec{
		Annotation: "node image for Kubernetes v1.33.1, built by the harness",
		VAppConfig: &types.VmConfigSpec{Property: []types.VAppPropertySpec{
			{ArrayUpdateSpec: add, Info: &types.VAppPropertyInfo{Key: 1, Id: "VERSION", Type: "string", Value: "v1.33.1+vmware.1"}},
			{ArrayUpdateSpec: add, Info: &types.VAppPropertyInfo{Key: 2, Id: "KUBERNETES_SEMVER", Type: "string", Value: "v1.33.1"}},
			{ArrayUpdateSpec: add, Info: &types.VAppPropertyInfo{Key: 3, Id: "guestinfo.admin_password", Type: "password", Value: "template-only-secret-99", UserConfigurable: &yes}},
			// A careless OVA can carry the vCenter password in a plain property.
			{ArrayUpdateSpec: add, Info: &types.VAppPropertyInfo{Key: 4, Id: "NOTE", Type: "string", Value: "login " + vcPassword}},
		}},
	}
	task, err = tmpl.Reconfigure(ctx, spec)
	must(t, err)
	must(t, task.Wait(ctx))
	task, err = tmpl.PowerOff(ctx)
	must(t, err)
	must(t, task.Wait(ctx))
	task, err = tmpl.Rename(ctx, "tkg-ubuntu-2204")
	must(t, err)
	must(t, task.Wait(ctx))
	must(t, tmpl.MarkAsTemplate(ctx))

	// Powering on a running VM fails: the kind of task failure a run hits.
	vm0, err := f.VirtualMachine(ctx, "run-42/DC0_H0_VM0")
	must(t, err)
	task, err = vm0.PowerOn(ctx)
	must(t, err)
	if err := task.Wait(ctx); err == nil {
		t.Fatal("expected the second power-on to fail")
	}
	_ = c.Logout(ctx)
	return s, start
}

func TestCollectAgainstVcsim(t *testing.T) {
	s, start := vcsim(t)
	w := artifactstest.NewWriter(t, artifacts.DefaultMaxFileSize)
	u := *s.URL
	u.User = nil
	begin := time.Now()
	got, err := vsphere.Collect(context.Background(), w, vsphere.Input{URL: u.String(), Username: vcUser, Password: vcPassword, Insecure: true,
		VMFolder: "run-42", TemplateNames: []string{"tkg-ubuntu-2204"}, Since: start, ItemTimeout: 20 * time.Second})
	must(t, err)
	t.Logf("collected in %s: %+v", time.Since(begin), got)
	if got.APIError != "" || got.VMs != 2 || len(got.Templates) != 1 || got.Templates[0] != "tkg-ubuntu-2204" {
		t.Fatalf("findings %+v", got)
	}
	if len(got.FailedTasks) == 0 || !strings.Contains(got.FailedTasks[0].Name, "powerOn") || !strings.Contains(got.FailedTasks[0].Error, "InvalidPowerState") {
		t.Errorf("failed power-on task not reported: %+v", got.FailedTasks)
	}
	for _, it := range w.Items() {
		t.Errorf("item not collected: %+v", it)
	}

	var inv struct {
		Folder string `json:"folder"`
		VMs    []struct {
			Name, Path, PowerState, Annotation string
			Template                           bool
			VAppProperties                     []struct{ ID, Type, Value string } `json:"vAppProperties"`
		} `json:"vms"`
	}
	b, err := os.ReadFile(filepath.Join(w.Root(), "vsphere", "inventory.yaml"))
	must(t, err)
	must(t, yaml.Unmarshal(b, &inv))
	if inv.Folder != "/DC0/vm/run-42" || len(inv.VMs) != 3 {
		t.Fatalf("inventory:\n%s", b)
	}
	props := map[string]string{}
	for _, vm := range inv.VMs {
		if vm.Name == "tkg-ubuntu-2204" {
			if !vm.Template || !strings.Contains(vm.Annotation, "v1.33.1") || vm.Path != "/DC0/vm/tkg-ubuntu-2204" {
				t.Errorf("template record %+v", vm)
			}
			for _, p := range vm.VAppProperties {
				props[p.ID] = p.Value
			}
		} else if !strings.HasPrefix(vm.Path, "/DC0/vm/run-42/") || vm.PowerState != "poweredOn" {
			t.Errorf("run VM record %+v", vm)
		}
	}
	if props["VERSION"] != "v1.33.1+vmware.1" || props["KUBERNETES_SEMVER"] != "v1.33.1" || props["guestinfo.admin_password"] != "<redacted>" || props["NOTE"] != "login <redacted>" {
		t.Errorf("vApp properties %v", props)
	}

	tasks, err := os.ReadFile(filepath.Join(w.Root(), "vsphere", "tasks.txt"))
	must(t, err)
	for _, want := range []string{"VirtualMachine.reconfigVm", "VirtualMachine.rename", "error   VirtualMachine.powerOn", "InvalidPowerState"} {
		if !strings.Contains(string(tasks), want) {
			t.Errorf("tasks.txt lacks %q:\n%s", want, tasks)
		}
	}
	events, err := os.ReadFile(filepath.Join(w.Root(), "vsphere", "events.txt"))
	must(t, err)
	if strings.Count(string(events), "\n") < 3 {
		t.Errorf("events.txt nearly empty:\n%s", events)
	}
	findings, err := leakcheck.Dir(w.Root(), vcPassword, "template-only-secret-99")
	must(t, err)
	for _, f := range findings {
		t.Errorf("leak: %s", f)
	}
}

func TestWrongPasswordIsRecordedNotFatal(t *testing.T) {
	s, _ := vcsim(t)
	w := artifactstest.NewWriter(t, artifacts.DefaultMaxFileSize)
	u := *s.URL
	u.User = nil
	wrong := "not-the-password-123"
	got, err := vsphere.Collect(context.Background(), w, vsphere.Input{URL: u.String(), Username: vcUser, Password: wrong, Insecure: true,
		VMFolder: "run-42", ItemTimeout: 10 * time.Second})
	must(t, err)
	if !strings.Contains(got.APIError, "log in") {
		t.Fatalf("APIError %q", got.APIError)
	}
	must(t, w.WriteIndex())
	b, err := os.ReadFile(filepath.Join(w.Root(), artifacts.ErrorsFile))
	must(t, err)
	if !strings.Contains(string(b), "[failed] vsphere: connect to vCenter") || !strings.Contains(string(b), "[not collected] vsphere: inventory, tasks and events") {
		t.Errorf("errors.txt:\n%s", b)
	}
	findings, err := leakcheck.Dir(w.Root(), wrong)
	must(t, err)
	for _, f := range findings {
		t.Errorf("leak: %s", f)
	}
}

func TestBadInputFailsEarly(t *testing.T) {
	w := artifactstest.NewWriter(t, 1024)
	_, err := vsphere.Collect(context.Background(), w, vsphere.Input{URL: "https://vc/sdk", Username: "u", Password: "p-secret-1"})
	if err == nil || !strings.Contains(err.Error(), "VMFolder") || !strings.Contains(err.Error(), "ItemTimeout") {
		t.Fatalf("err = %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
