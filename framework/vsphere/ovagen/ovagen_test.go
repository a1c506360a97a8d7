package ovagen_test

import (
	"archive/tar"
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vmware/govmomi/ovf"
	"github.com/vmware/govmomi/vapi/library"
	"github.com/vmware/govmomi/vmdk"

	"github.com/tkg-e2e/harness/framework/vsphere/ovagen"
)

func write(t *testing.T, o ovagen.Options) (*ovagen.Result, map[string][]byte, []string) {
	t.Helper()
	r, err := ovagen.Write(filepath.Join(t.TempDir(), o.Name+".ova"), o)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(r.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files := map[string][]byte{}
	var order []string
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return r, nil, nil
		}
		b, _ := io.ReadAll(tr)
		files[h.Name] = b
		order = append(order, h.Name)
	}
	return r, files, order
}

func TestWriteValidOVA(t *testing.T) {
	r, files, order := write(t, ovagen.Options{Name: "node", DataSize: 256 << 10, DiskCapacity: 8 << 20})
	if want := []string{"node.ovf", "node.mf", "node-disk1.vmdk"}; strings.Join(order, ",") != strings.Join(want, ",") {
		t.Fatalf("archive order %v, want %v (descriptor first)", order, want)
	}
	b, _ := os.ReadFile(r.Path)
	if s := sha256.Sum256(b); hex.EncodeToString(s[:]) != r.SHA256 || int64(len(b)) != r.Size {
		t.Errorf("Result.SHA256/Size do not describe the file")
	}
	if s := sha256.Sum256(files["node.mf"]); hex.EncodeToString(s[:]) != r.ManifestSHA256 {
		t.Errorf("Result.ManifestSHA256 %s does not describe node.mf", r.ManifestSHA256)
	}
	mf, err := library.ReadManifest(bytes.NewReader(files["node.mf"]))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"node.ovf", "node-disk1.vmdk"} {
		s := sha256.Sum256(files[name])
		if mf[name] == nil || mf[name].Algorithm != "SHA256" || mf[name].Checksum != hex.EncodeToString(s[:]) {
			t.Errorf("manifest entry for %s = %+v", name, mf[name])
		}
	}
	env, err := ovf.Unmarshal(bytes.NewReader(files["node.ovf"]))
	if err != nil {
		t.Fatal(err)
	}
	props := map[string]string{}
	for _, p := range env.VirtualSystem.Product {
		if p.Category != ovagen.CAPICategory {
			t.Errorf("product section category = %v", p.Category)
		}
		for _, prop := range p.Property {
			props[prop.Key] = *prop.Default
		}
	}
	for id, v := range ovagen.DefaultProperties() {
		if props[id] != v {
			t.Errorf("property %s = %q, want %q", id, props[id], v)
		}
	}
	if int64(env.References[0].Size) != int64(len(files["node-disk1.vmdk"])) {
		t.Errorf("OVF file size %d, archive %d", env.References[0].Size, len(files["node-disk1.vmdk"]))
	}
	info, err := vmdk.Seek(bytes.NewReader(files["node-disk1.vmdk"]))
	if err != nil || info.Capacity != 8<<20 {
		t.Errorf("disk is not a stream-optimized VMDK of 8 MiB: %+v, %v", info, err)
	}
}

func TestWriteIsDeterministicPerSeed(t *testing.T) {
	a, _, _ := write(t, ovagen.Options{Name: "n", Format: ovagen.Raw, Seed: 1})
	b, _, _ := write(t, ovagen.Options{Name: "n", Format: ovagen.Raw, Seed: 1})
	c, _, _ := write(t, ovagen.Options{Name: "n", Format: ovagen.Raw, Seed: 2})
	if a.SHA256 != b.SHA256 || a.SHA256 == c.SHA256 {
		t.Errorf("sha256 seed1 %s / %s, seed2 %s: want equal for the same seed, different otherwise", a.SHA256, b.SHA256, c.SHA256)
	}
	if a.DiskSize != 1<<20 {
		t.Errorf("raw disk of the default 1 MiB is %d bytes", a.DiskSize)
	}
}

func TestBreakages(t *testing.T) {
	_, files, _ := write(t, ovagen.Options{Name: "n", Break: ovagen.NoOVF})
	if _, ok := files["n.ovf"]; ok || files["n.mf"] == nil {
		t.Error("no-ovf: descriptor present or manifest missing")
	}
	_, files, _ = write(t, ovagen.Options{Name: "n", Break: ovagen.MissingDisk})
	if _, ok := files["n-disk1.vmdk"]; ok || !bytes.Contains(files["n.ovf"], []byte(`ovf:href="n-disk1.vmdk"`)) {
		t.Error("missing-disk: disk present or not referenced")
	}
	_, files, _ = write(t, ovagen.Options{Name: "n", Break: ovagen.NoManifest})
	if _, ok := files["n.mf"]; ok {
		t.Error("no-manifest: manifest present")
	}
	_, files, _ = write(t, ovagen.Options{Name: "n", Break: ovagen.BadChecksum, ManifestAlgorithm: "SHA1"})
	mf, _ := library.ReadManifest(bytes.NewReader(files["n.mf"]))
	if mf["n-disk1.vmdk"] == nil || mf["n-disk1.vmdk"].Algorithm != "SHA1" || len(mf["n-disk1.vmdk"].Checksum) != 40 {
		t.Fatalf("bad-checksum manifest: %+v", mf["n-disk1.vmdk"])
	}
	s := sha1Hex(files["n-disk1.vmdk"])
	if mf["n-disk1.vmdk"].Checksum == s || mf["n.ovf"].Checksum != sha1Hex(files["n.ovf"]) {
		t.Error("bad-checksum: the disk digest is right or the OVF digest is wrong")
	}
	r, files, _ := write(t, ovagen.Options{Name: "n", Break: ovagen.NotTar})
	if files != nil || r.Size == 0 {
		t.Error("not-tar: the file reads as a tar")
	}
	_, files, _ = write(t, ovagen.Options{Name: "n", Break: ovagen.UnsupportedDevice})
	if !bytes.Contains(files["n.ovf"], []byte("<rasd:ResourceType>99</rasd:ResourceType>")) {
		t.Error("unsupported-device: no resource type 99 item")
	}
}

func TestOptionsAreChecked(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		o    ovagen.Options
		want string
	}{
		{ovagen.Options{}, "Options.Name is required"},
		{ovagen.Options{Name: "n", Format: "qcow2"}, `unknown disk format "qcow2"`},
		{ovagen.Options{Name: "n", ManifestAlgorithm: "MD5"}, `manifest algorithm "MD5" not supported`},
		{ovagen.Options{Name: "n", DataSize: 4 << 20, DiskCapacity: 1 << 20}, "smaller than DataSize"},
	} {
		_, err := ovagen.Write(filepath.Join(dir, "x.ova"), c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want %q", c.o, err, c.want)
		}
	}
}

func sha1Hex(b []byte) string {
	s := sha1.Sum(b)
	return hex.EncodeToString(s[:])
}
