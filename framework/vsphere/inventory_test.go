package vsphere_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/tkg-e2e/harness/framework/redact"
	"github.com/tkg-e2e/harness/framework/vsphere"
	"github.com/tkg-e2e/harness/framework/vsphere/ovagen"
)

func TestInventoryDumpHasTemplatesTasksAndEventsButNoPassword(t *testing.T) {
	s := connect(t)
	ctx := context.Background()
	ova := writeOVA(t, "node-inventory", ovagen.Options{})
	if _, err := importOne(t, s, vsphere.OVA{Source: ova.Path}, nil); err != nil {
		t.Fatal(err)
	}
	inv, err := s.CollectInventory(ctx, vsphere.InventoryInput{Datacenter: "DC0", MaxTasks: 20, MaxEvents: 20})
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Errors) != 0 {
		t.Errorf("collection errors: %v", inv.Errors)
	}
	var tmpl *vsphere.VMSummary
	for i := range inv.VMs {
		if inv.VMs[i].Name == "node-inventory" {
			tmpl = &inv.VMs[i]
		}
	}
	if tmpl == nil || !tmpl.Template || tmpl.OVASHA256 != ova.SHA256 || tmpl.PowerState != "poweredOff" || len(tmpl.Properties) != 5 {
		t.Fatalf("template in inventory = %+v", tmpl)
	}
	if len(inv.Tasks) == 0 || len(inv.Events) == 0 || len(inv.Events) > 20 {
		t.Errorf("want recent tasks and at most 20 events, got %d tasks, %d events", len(inv.Tasks), len(inv.Events))
	}

	dir := t.TempDir()
	if err := vsphere.WriteInventory(dir, inv, redact.New(sim.Password)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "inventory.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var back vsphere.Inventory
	if err := yaml.Unmarshal(b, &back); err != nil || len(back.VMs) != len(inv.VMs) {
		t.Errorf("inventory.yaml does not read back: %v", err)
	}
	for _, f := range []string{"inventory.yaml", "inventory.json"} {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		if strings.Contains(string(b), sim.Password) {
			t.Errorf("%s contains the password", f)
		}
		if !strings.Contains(string(b), "KUBERNETES_SEMVER") || !strings.Contains(string(b), ova.SHA256) {
			t.Errorf("%s lacks the template's properties or sha256", f)
		}
	}
}

func TestInventoryOfAMissingFolderFails(t *testing.T) {
	s := connect(t)
	_, err := s.CollectInventory(context.Background(), vsphere.InventoryInput{Datacenter: "DC0", Folder: "nope"})
	mustContain(t, err, `folder "nope" not found in datacenter "DC0"`)
}
