package vsphere_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/tkg-e2e/harness/framework/vsphere"
	"github.com/tkg-e2e/harness/framework/vsphere/ovagen"
)

// An OVA whose manifest is SHA1 has no manifest identity: the template
// carries the whole file's sha256, learnt on the upload's read.
func TestImportMakesATemplateWithShaAnnotationAndProperties(t *testing.T) {
	s := connect(t)
	ova := writeOVA(t, "node-basic", ovagen.Options{ManifestAlgorithm: "SHA1"})
	var progress syncBuffer
	in := input(&progress, vsphere.OVA{Source: ova.Path})
	res, err := s.ImportOVAs(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	r := res[0]
	if r.Action != vsphere.Imported || r.Path != "/DC0/vm/node-basic" || r.SHA256 != ova.SHA256 || r.Bytes != ova.DiskSize {
		t.Errorf("result = %+v; want imported /DC0/vm/node-basic sha %s bytes %d", r, ova.SHA256, ova.DiskSize)
	}
	vm := vmByName(t, s, "node-basic")
	if vm == nil || !vm.Config.Template {
		t.Fatalf("template node-basic missing or not a template: %+v", vm)
	}
	if got, mf := vsphere.AnnotationSHA256(vm.Config.Annotation), vsphere.AnnotationManifestSHA256(vm.Config.Annotation); got != ova.SHA256 || mf != "" || r.ManifestSHA256 != "" {
		t.Errorf("annotation sha256 = %q, manifest sha256 %q (result %q), want %s and none; annotation:\n%s", got, mf, r.ManifestSHA256, ova.SHA256, vm.Config.Annotation)
	}
	if err := s.ValidateProperties(context.Background(), "DC0", r.Path, ovagen.DefaultProperties()); err != nil {
		t.Errorf("properties of a fresh import: %v", err)
	}
	for _, want := range []string{"[ova] node-basic: ", "identity: the whole file's sha256, learnt on its one read (the manifest node-basic.mf pins node-basic.ovf with SHA1)",
		"sha256 " + ova.SHA256, "importing into /DC0/vm", "uploaded 1.0 MiB", "imported as template /DC0/vm/node-basic"} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, progress.String())
		}
	}
}

func TestValidatePropertiesReportsEveryMismatchAndMissing(t *testing.T) {
	s := connect(t)
	ova := writeOVA(t, "node-props", ovagen.Options{})
	if _, err := importOne(t, s, vsphere.OVA{Source: ova.Path}, nil); err != nil {
		t.Fatal(err)
	}
	want := ovagen.DefaultProperties()
	want["KUBERNETES_SEMVER"] = "v1.32.0+vmware.1"
	want["DISTRO_ARCH"] = "arm64"
	want["IMAGE_TYPE"] = "node"
	err := s.ValidateProperties(context.Background(), "DC0", "/DC0/vm/node-props", want)
	var pe *vsphere.PropertyError
	if !errors.As(err, &pe) || len(pe.Mismatches) != 3 {
		t.Fatalf("want a PropertyError with 3 mismatches, got %v", err)
	}
	mustContain(t, err,
		`DISTRO_ARCH: expected "arm64", found "amd64"`,
		`KUBERNETES_SEMVER: expected "v1.32.0+vmware.1", found "v1.33.1+vmware.1"`,
		`IMAGE_TYPE: expected "node", property missing`,
		"the template has: DISTRO_ARCH, DISTRO_NAME, DISTRO_VERSION, KUBERNETES_SEMVER, VERSION")
}

func TestSecondImportOfTheSameOVAReusesTheTemplate(t *testing.T) {
	s := connect(t)
	ova := writeOVA(t, "node-reuse", ovagen.Options{})
	first, err := importOne(t, s, vsphere.OVA{Source: ova.Path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var progress syncBuffer
	in := input(&progress, vsphere.OVA{Source: ova.Path})
	res, err := s.ImportOVAs(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	second := res[0]
	if second.Action != vsphere.Reused || second.Ref != first.Ref || second.Bytes != 0 {
		t.Errorf("second import = %+v; want reused %v with 0 bytes uploaded", second, first.Ref)
	}
	if !strings.Contains(progress.String(), "reusing template /DC0/vm/node-reuse: it was imported from the same OVA") {
		t.Errorf("progress does not say it reused:\n%s", progress.String())
	}
}

// OVAs identified by their whole-file sha256 (SHA1 manifests); see
// TestSameNameOtherManifestIsAnErrorUnlessReplace for manifest identities.
func TestSameNameOtherOVAIsAnErrorUnlessReplace(t *testing.T) {
	s := connect(t)
	a := writeOVA(t, "node-swap", ovagen.Options{Seed: 1, ManifestAlgorithm: "SHA1"})
	b := writeOVA(t, "node-swap", ovagen.Options{Seed: 2, ManifestAlgorithm: "SHA1"})
	first, err := importOne(t, s, vsphere.OVA{Source: a.Path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = importOne(t, s, vsphere.OVA{Source: b.Path}, nil)
	mustContain(t, err, "template /DC0/vm/node-swap already exists with sha256 "+a.SHA256, "has sha256 "+b.SHA256, "set replace: true")
	if vm := vmByName(t, s, "node-swap"); vm == nil || vm.Self != first.Ref {
		t.Fatal("the existing template was touched without Replace")
	}

	r, err := importOne(t, s, vsphere.OVA{Source: b.Path}, func(in *vsphere.ImportInput) { in.Replace = true })
	if err != nil {
		t.Fatal(err)
	}
	vm := vmByName(t, s, "node-swap")
	if r.Action != vsphere.Replaced || vm == nil || vm.Self == first.Ref || vsphere.AnnotationSHA256(vm.Config.Annotation) != b.SHA256 || !vm.Config.Template {
		t.Errorf("replace: result %+v, template %+v; want a new template with sha %s", r, vm, b.SHA256)
	}
	// The old template is kept under its aside name, same moref (clones by
	// it keep working), still a template with its sha.
	if !regexp.MustCompile(`^/DC0/vm/node-swap\.replaced-\d{8}T\d{6}Z$`).MatchString(r.Kept) {
		t.Fatalf("kept = %q, want /DC0/vm/node-swap.replaced-<time>", r.Kept)
	}
	old := vmByName(t, s, strings.TrimPrefix(r.Kept, "/DC0/vm/"))
	if old == nil || old.Self != first.Ref || !old.Config.Template || vsphere.AnnotationSHA256(old.Config.Annotation) != a.SHA256 {
		t.Errorf("old template at %s: %+v; want %v, a template with sha %s", r.Kept, old, first.Ref, a.SHA256)
	}
	if temps := vmsWithPrefix(t, s, "node-swap.importing-"); len(temps) != 0 {
		t.Errorf("%d temporary VMs left", len(temps))
	}
}

func TestSeveralOVAsImportConcurrently(t *testing.T) {
	s := connect(t)
	var ovas []vsphere.OVA
	for i := range 4 {
		o := writeOVA(t, fmt.Sprintf("node-conc-%d", i), ovagen.Options{Seed: uint64(i), DataSize: 4 << 20})
		ovas = append(ovas, vsphere.OVA{Source: o.Path})
	}
	var progress syncBuffer
	in := input(&progress, ovas...)
	in.Concurrency = 4
	res, err := s.ImportOVAs(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if want := fmt.Sprintf("node-conc-%d", i); r.Name != want || r.Action != vsphere.Imported {
			t.Errorf("result %d = %+v, want %s imported (results keep input order)", i, r, want)
		}
	}
	// With 4 workers every import starts before the first one ends.
	out := progress.String()
	firstDone := strings.Index(out, "imported as template")
	if n := strings.Count(out[:max(firstDone, 0)], "importing into"); n != 4 {
		t.Errorf("%d imports had started when the first finished, want 4:\n%s", n, out)
	}
	// Lines from different workers never interleave.
	line := regexp.MustCompile(`^\[ova\] node-conc-\d: \S`)
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !line.MatchString(l) {
			t.Errorf("garbled progress line %q", l)
		}
	}
}

func TestImportMapsTheNetwork(t *testing.T) {
	s := connect(t)
	ova := writeOVA(t, "node-net", ovagen.Options{})
	_, err := importOne(t, s, vsphere.OVA{Source: ova.Path}, func(in *vsphere.ImportInput) {
		in.Placement.Network = ""
		in.Placement.NetworkMapping = map[string]string{"nic0": "DC0_DVPG0"}
	})
	if err != nil {
		t.Fatal(err)
	}
	vm := vmByName(t, s, "node-net")
	var names []string
	for _, d := range vm.Config.Hardware.Device {
		if nic, ok := d.(types.BaseVirtualEthernetCard); ok {
			if b, ok := nic.GetVirtualEthernetCard().Backing.(*types.VirtualEthernetCardDistributedVirtualPortBackingInfo); ok {
				names = append(names, b.Port.PortgroupKey)
			}
		}
	}
	if len(names) != 1 {
		t.Errorf("want the NIC on the distributed port group DC0_DVPG0, got backings %v", names)
	}

	_, err = importOne(t, s, vsphere.OVA{Source: ova.Path, Name: "node-net-bad"}, func(in *vsphere.ImportInput) {
		in.Placement.NetworkMapping = map[string]string{"nic1": "VM Network"}
	})
	mustContain(t, err, `network mapping names OVF network "nic1", but node-net.ova defines: nic0`)
}
