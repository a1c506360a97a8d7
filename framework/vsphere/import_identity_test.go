package vsphere_test

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/tkg-e2e/harness/framework/vsphere"
	"github.com/tkg-e2e/harness/framework/vsphere/ovagen"
)

// An OVA whose SHA256 manifest pins every file is identified by the
// manifest: the import reads the file once (the upload, which verifies
// every file against the manifest) and never hashes it as a whole, and a
// second import reuses the template without reading the OVA at all.
func TestManifestIdentityImportsWithoutHashingTheWholeFile(t *testing.T) {
	s := connect(t)
	name := uniq("node-mfid")
	ova := writeOVA(t, name, ovagen.Options{Format: ovagen.Raw, DataSize: 4 << 20})

	var progress syncBuffer
	res, err := s.ImportOVAs(context.Background(), input(&progress, vsphere.OVA{Source: ova.Path}))
	if err != nil {
		t.Fatal(err)
	}
	r := res[0]
	if r.Action != vsphere.Imported || r.ManifestSHA256 != ova.ManifestSHA256 || r.SHA256 != "" || r.ReadBytes != ova.Size || r.Bytes != ova.DiskSize {
		t.Errorf("import = %+v; want imported with manifest sha256 %s and no whole-file sha256, after reading the file once (%d bytes)",
			r, ova.ManifestSHA256, ova.Size)
	}
	ann := vmByName(t, s, name).Config.Annotation
	if vsphere.AnnotationManifestSHA256(ann) != ova.ManifestSHA256 || vsphere.AnnotationSHA256(ann) != "" {
		t.Errorf("annotation should carry the manifest sha256 %s and no ova-sha256 line:\n%s", ova.ManifestSHA256, ann)
	}
	out := progress.String()
	mustContain(t, errString(out), "identity: manifest sha256 "+ova.ManifestSHA256+" (every file verified against it)")
	if strings.Contains(out, "hashed 4.0 MiB") || strings.Contains(out, "sha256 "+ova.SHA256) {
		t.Errorf("the whole file was hashed:\n%s", out)
	}

	progress = syncBuffer{}
	res, err = s.ImportOVAs(context.Background(), input(&progress, vsphere.OVA{Source: ova.Path}))
	if err != nil {
		t.Fatal(err)
	}
	if r := res[0]; r.Action != vsphere.Reused || r.ReadBytes != 0 || r.Bytes != 0 || r.ManifestSHA256 != ova.ManifestSHA256 {
		t.Errorf("second import = %+v; want reused without reading the OVA", r)
	}
	mustContain(t, errString(progress.String()), "reusing template /DC0/vm/"+name+": it was imported from the same OVA (manifest sha256 "+ova.ManifestSHA256+")")
	if strings.Contains(progress.String(), "hashed 4.0 MiB") {
		t.Errorf("the reuse hashed the OVA:\n%s", progress.String())
	}
}

// Another disk under the same name is another manifest: refused without
// Replace (nothing read), replaced with it (read once, by the upload).
func TestSameNameOtherManifestIsAnErrorUnlessReplace(t *testing.T) {
	s := connect(t)
	name := uniq("node-mfswap")
	a := writeOVA(t, name, ovagen.Options{Seed: 1})
	b := writeOVA(t, name, ovagen.Options{Seed: 2})
	first, err := importOne(t, s, vsphere.OVA{Source: a.Path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := importOne(t, s, vsphere.OVA{Source: b.Path}, nil)
	mustContain(t, err, "template /DC0/vm/"+name+" already exists with manifest sha256 "+a.ManifestSHA256,
		"has manifest sha256 "+b.ManifestSHA256, "it was imported from another OVA", "set replace: true")
	if r.ReadBytes != 0 {
		t.Errorf("the refusal read %d bytes of the OVA; want none", r.ReadBytes)
	}
	if vm := vmByName(t, s, name); vm == nil || vm.Self != first.Ref {
		t.Fatal("the existing template was touched without Replace")
	}

	r, err = importOne(t, s, vsphere.OVA{Source: b.Path}, func(in *vsphere.ImportInput) { in.Replace = true })
	if err != nil {
		t.Fatal(err)
	}
	vm := vmByName(t, s, name)
	if r.Action != vsphere.Replaced || r.ReadBytes != b.Size || vm == nil || vm.Self == first.Ref ||
		vsphere.AnnotationManifestSHA256(vm.Config.Annotation) != b.ManifestSHA256 {
		t.Errorf("replace: result %+v; want replaced after one read (%d bytes) by a template with manifest sha256 %s", r, b.Size, b.ManifestSHA256)
	}
	old := vmByName(t, s, strings.TrimPrefix(r.Kept, "/DC0/vm/"))
	if old == nil || old.Self != first.Ref || vsphere.AnnotationManifestSHA256(old.Config.Annotation) != a.ManifestSHA256 {
		t.Errorf("the old template is not kept at %q with its manifest sha256", r.Kept)
	}
}

// A template whose annotation has only ova-sha256 (an older harness, or an
// OVA without manifest identity) shares no identity with a manifest
// identified OVA: the OVA is hashed once, and reused when the sums agree.
func TestTemplateWithOnlyTheWholeFileSHA256IsComparedByHashing(t *testing.T) {
	s := connect(t)
	name := uniq("node-oldann")
	ova := writeOVA(t, name, ovagen.Options{})
	first, err := importOne(t, s, vsphere.OVA{Source: ova.Path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	setAnnotation(t, s, name, "Imported by the tkg-e2e harness.\nova-sha256: "+ova.SHA256+"\nova: "+name+".ova\n")

	var progress syncBuffer
	res, err := s.ImportOVAs(context.Background(), input(&progress, vsphere.OVA{Source: ova.Path}))
	if err != nil {
		t.Fatal(err)
	}
	if r := res[0]; r.Action != vsphere.Reused || r.Ref != first.Ref || r.ReadBytes != ova.Size || r.SHA256 != ova.SHA256 {
		t.Errorf("import = %+v; want reused after one hash pass (%d bytes) that found sha256 %s", r, ova.Size, ova.SHA256)
	}
	mustContain(t, errString(progress.String()), "hashed 1.0 MiB", "reusing template /DC0/vm/"+name+": it was imported from the same OVA (sha256 "+ova.SHA256+")")

	other := strings.Repeat("e", 64)
	setAnnotation(t, s, name, "Imported by the tkg-e2e harness.\nova-sha256: "+other+"\nova: "+name+".ova\n")
	_, err = importOne(t, s, vsphere.OVA{Source: ova.Path}, nil)
	mustContain(t, err, "template /DC0/vm/"+name+" already exists with sha256 "+other, "has sha256 "+ova.SHA256, "set replace: true")
}

// A sha256 in the config is still checked on the OVA's one read, whatever
// identifies it; a match records both identities, and a template with
// only the manifest identity is then compared on that.
func TestConfiguredSHA256IsStillVerified(t *testing.T) {
	s := connect(t)
	name := uniq("node-cfgsha")
	ova := writeOVA(t, name, ovagen.Options{})
	wrong := strings.Repeat("1", 64)
	_, err := importOne(t, s, vsphere.OVA{Source: ova.Path, SHA256: wrong}, nil)
	mustContain(t, err, "has sha256 "+ova.SHA256+" but the config expects "+wrong, "stopped before its last bytes")
	if left := leftBehind(t, s, name); len(left) > 0 {
		t.Errorf("VMs left behind: %v", left)
	}

	r, err := importOne(t, s, vsphere.OVA{Source: ova.Path, SHA256: ova.SHA256}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ann := vmByName(t, s, name).Config.Annotation
	if r.SHA256 != ova.SHA256 || r.ManifestSHA256 != ova.ManifestSHA256 || r.ReadBytes != ova.Size ||
		vsphere.AnnotationSHA256(ann) != ova.SHA256 || vsphere.AnnotationManifestSHA256(ann) != ova.ManifestSHA256 {
		t.Errorf("import = %+v; want both identities in the result and the annotation after one read:\n%s", r, ann)
	}

	setAnnotation(t, s, name, "Imported by the tkg-e2e harness.\nova-manifest-sha256: "+ova.ManifestSHA256+"\nova: "+name+".ova\n")
	r, err = importOne(t, s, vsphere.OVA{Source: ova.Path, SHA256: ova.SHA256}, nil)
	if err != nil || r.Action != vsphere.Reused || r.ReadBytes != ova.Size {
		t.Errorf("import with the right sha256 = %+v, %v; want reused after the hash pass that checks it", r, err)
	}
	r, err = importOne(t, s, vsphere.OVA{Source: ova.Path, SHA256: wrong}, nil)
	mustContain(t, err, "has sha256 "+ova.SHA256+" but the config expects "+wrong, "nothing was uploaded")
}

// Only a manifest that pins every file identifies the OVA: a file it does
// not list falls back to the whole-file sha256; a signature (.cert) may be
// left out, as it signs the manifest.
func TestAManifestThatLeavesAFileOutIsNoIdentity(t *testing.T) {
	s := connect(t)
	for _, c := range []struct {
		extra    string
		manifest bool
	}{{"README.txt", false}, {"node.cert", true}} {
		t.Run(c.extra, func(t *testing.T) {
			name := uniq("node-extra")
			ova := writeOVA(t, name, ovagen.Options{})
			appendEntry(t, ova.Path, c.extra, []byte("not in the manifest\n"))
			var progress syncBuffer
			res, err := s.ImportOVAs(context.Background(), input(&progress, vsphere.OVA{Source: ova.Path}))
			if err != nil {
				t.Fatal(err)
			}
			ann := vmByName(t, s, name).Config.Annotation
			sum := fileSHA256(t, ova.Path)
			switch r := res[0]; {
			case c.manifest && (r.ManifestSHA256 != ova.ManifestSHA256 || r.SHA256 != "" || vsphere.AnnotationSHA256(ann) != ""):
				t.Errorf("with %s: %+v; want the manifest identity only", c.extra, r)
			case !c.manifest && (r.ManifestSHA256 != "" || r.SHA256 != sum || vsphere.AnnotationSHA256(ann) != sum || vsphere.AnnotationManifestSHA256(ann) != ""):
				t.Errorf("with %s: %+v; want the whole-file sha256 %s only; annotation:\n%s", c.extra, r, sum, ann)
			}
			if !c.manifest {
				mustContain(t, errString(progress.String()), "identity: the whole file's sha256, learnt on its one read (the manifest "+name+".mf does not list "+c.extra+")")
			}
		})
	}
}

// setAnnotation rewrites a template's annotation, as an older harness or a
// person would have left it.
func setAnnotation(t *testing.T, s *vsphere.Session, name, text string) {
	t.Helper()
	ctx := context.Background()
	vm := vmByName(t, s, name)
	if vm == nil {
		t.Fatalf("no VM %s", name)
	}
	task, err := vmObject(s, vm).Reconfigure(ctx, types.VirtualMachineConfigSpec{Annotation: text})
	if err != nil {
		t.Fatal(err)
	}
	if err := task.Wait(ctx); err != nil {
		t.Fatalf("annotating %s: %v", name, err)
	}
}

// appendEntry rewrites the OVA with one more file at its end.
func appendEntry(t *testing.T, file, name string, data []byte) {
	t.Helper()
	in, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	tr, tw := tar.NewReader(bytes.NewReader(in)), tar.NewWriter(&out)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(tw, tr); err != nil {
			t.Fatal(err)
		}
	}
	h := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: time.Unix(0, 0), Format: tar.FormatUSTAR}
	if err := tw.WriteHeader(h); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
