package vsphere_test

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/framework/vsphere"
	"github.com/tkg-e2e/harness/framework/vsphere/ovagen"
)

// An import of an OVA identified by its whole-file sha256 (its manifest is
// SHA1) reads it once: the upload's read also yields the sha256. A template
// of the name present means one hash pass and no upload; a VM of the name
// that is no template means no read at all.
func TestEachDecisionReadsTheOVAAtMostOnce(t *testing.T) {
	s := connect(t)
	ova := writeOVA(t, "node-once", ovagen.Options{Format: ovagen.Raw, DataSize: 4 << 20, ManifestAlgorithm: "SHA1"})

	first, err := importOne(t, s, vsphere.OVA{Source: ova.Path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if first.ReadBytes != ova.Size || first.Bytes != ova.DiskSize || first.SHA256 != ova.SHA256 {
		t.Errorf("import read %d bytes (want the file's %d once), uploaded %d (want %d), sha256 %s (want %s)",
			first.ReadBytes, ova.Size, first.Bytes, ova.DiskSize, first.SHA256, ova.SHA256)
	}
	if first.UploadRate <= 0 || first.ClientCPU <= 0 || first.CPUPerGiB <= 0 {
		t.Errorf("import reports upload rate %.0f B/s, client CPU %s, %.2f s/GiB; want all three measured",
			first.UploadRate, first.ClientCPU, first.CPUPerGiB)
	}

	var progress syncBuffer
	res, err := s.ImportOVAs(context.Background(), input(&progress, vsphere.OVA{Source: ova.Path}))
	if err != nil {
		t.Fatal(err)
	}
	if r := res[0]; r.Action != vsphere.Reused || r.ReadBytes != ova.Size || r.Bytes != 0 || r.UploadRate != 0 {
		t.Errorf("second import = %+v; want reused after one hash pass (%d bytes) and no upload", r, ova.Size)
	}
	if !strings.Contains(progress.String(), "hashed 4.0 MiB") || strings.Contains(progress.String(), "uploaded") {
		t.Errorf("progress of the reuse should show one hash pass and no upload:\n%s", progress.String())
	}

	// DC0_H0_VM0 is one of the simulator's own VMs: not a template, so its
	// name is refused whatever the OVA holds, without reading it.
	r, err := importOne(t, s, vsphere.OVA{Source: ova.Path, Name: "DC0_H0_VM0"}, nil)
	mustContain(t, err, `a VM (not a template) named "DC0_H0_VM0" already exists`)
	if r.ReadBytes != 0 || r.SHA256 != "" {
		t.Errorf("refusing a foreign VM's name read %d bytes (sha256 %q); want none", r.ReadBytes, r.SHA256)
	}
}

// A disk whose last byte is wrong is only found bad when the upload has
// sent all but that byte's chunk: the lease is aborted, the VM removed, and
// the run state says so with the OVA's identity: the sha256 of the bytes
// that were read (SHA1 manifest), or the manifest's (SHA256 manifest).
func TestCorruptDiskFoundAtTheEndOfTheStreamLeavesNoVM(t *testing.T) {
	for _, alg := range []string{"SHA1", "SHA256"} {
		t.Run(alg, func(t *testing.T) {
			s := connect(t)
			state, err := run.New(t.TempDir(), "test", "local", "")
			if err != nil {
				t.Fatal(err)
			}
			name := "node-corrupt-tail-" + strings.ToLower(alg)
			ova := writeOVA(t, name, ovagen.Options{Format: ovagen.Raw, DataSize: 8 << 20, ManifestAlgorithm: alg})
			flipLastByteOf(t, ova.Path, name+"-disk1.vmdk")
			want := vsphere.Result{SHA256: fileSHA256(t, ova.Path)}
			if alg == "SHA256" {
				want = vsphere.Result{ManifestSHA256: ova.ManifestSHA256}
			}

			var progress syncBuffer
			in := input(&progress, vsphere.OVA{Source: ova.Path})
			in.Recorder, in.CreatedBy = state, "ova"
			res, err := s.ImportOVAs(context.Background(), in)
			var ce *vsphere.ChecksumError
			if !errors.As(err, &ce) || ce.File != name+"-disk1.vmdk" {
				t.Fatalf("want a *ChecksumError for the disk, got %v", err)
			}
			if !strings.Contains(progress.String(), "removed the half-imported VM /DC0/vm/"+name+".importing-") {
				t.Errorf("progress does not report the cleanup:\n%s", progress.String())
			}
			if left := leftBehind(t, s, name); len(left) > 0 {
				t.Errorf("VMs left behind: %v", left)
			}
			if r := res[0]; r.SHA256 != want.SHA256 || r.ManifestSHA256 != want.ManifestSHA256 || r.ReadBytes != ova.Size {
				t.Errorf("result sha256 %q, manifest sha256 %q after reading %d bytes; want %q, %q after the whole file (%d)",
					r.SHA256, r.ManifestSHA256, r.ReadBytes, want.SHA256, want.ManifestSHA256, ova.Size)
			}
			rec, ok := state.Resource(vsphere.ResourceKind, "/DC0/vm/"+name)
			if !ok || rec.State != "deleted" || rec.Attributes["sha256"] != want.SHA256 || rec.Attributes["manifestSha256"] != want.ManifestSHA256 {
				t.Errorf("run state resource = %+v (found %v), want deleted with sha256 %q, manifest sha256 %q", rec, ok, want.SHA256, want.ManifestSHA256)
			}
		})
	}
}

// The config's sha256 of a local OVA is checked on the upload's read; a
// mismatch stops the upload and leaves no VM.
func TestExpectedSHA256MismatchFoundWhileUploadingLeavesNoVM(t *testing.T) {
	s := connect(t)
	ova := writeOVA(t, "node-expect-stream", ovagen.Options{})
	wrong := strings.Repeat("1", 64)
	r, err := importOne(t, s, vsphere.OVA{Source: ova.Path, SHA256: wrong}, nil)
	mustContain(t, err, "has sha256 "+ova.SHA256+" but the config expects "+wrong, "stopped before its last bytes")
	if left := leftBehind(t, s, "node-expect-stream"); len(left) > 0 {
		t.Errorf("VMs left behind: %v", left)
	}
	if r.ReadBytes != ova.Size {
		t.Errorf("read %d bytes, want the file once (%d)", r.ReadBytes, ova.Size)
	}
}

func fileSHA256(t *testing.T, file string) string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// flipLastByteOf corrupts the last data byte of entry in the tar file.
func flipLastByteOf(t *testing.T, file, entry string) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("%s not found in %s: %v", entry, file, err)
		}
		if h.Name != entry {
			continue
		}
		start, err := f.Seek(0, io.SeekCurrent)
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 1)
		at := start + h.Size - 1
		if _, err := f.ReadAt(b, at); err != nil {
			t.Fatal(err)
		}
		b[0] ^= 0xff
		if _, err := f.WriteAt(b, at); err != nil {
			t.Fatal(err)
		}
		return
	}
}
