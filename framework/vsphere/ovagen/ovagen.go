package ovagen

import (
	"archive/tar"
	"bufio"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Result describes a written OVA.
type Result struct {
	// Path of the OVA.
	Path string
	// SHA256 of the whole OVA file, lower-case hex: what a release page lists
	// and what the importer puts in the template's annotation when it knows it.
	SHA256 string
	// ManifestSHA256 is the sha256 of the .mf file ("" without one): the
	// importer's identity of an OVA whose manifest is SHA256.
	ManifestSHA256 string
	// Size of the OVA in bytes.
	Size int64
	// Name of the virtual system.
	Name string
	// Properties written into the CAPI ProductSection.
	Properties map[string]string
	// DiskName is the disk's file name inside the archive; DiskSize its size.
	DiskName string
	DiskSize int64
}

// Write writes an OVA to path: <name>.ovf, <name>.mf, <name>-disk1.vmdk in that
// order (descriptor first, as the OVF spec and image-builder do), with the
// defect o.Break asks for.
func Write(path string, o Options) (*Result, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if o.Break == NotTar {
		return writeNotTar(path, o)
	}
	dir := filepath.Dir(path)
	disk, err := writeDisk(dir, o)
	if err != nil {
		return nil, err
	}
	defer os.Remove(disk)

	diskName := o.Name + "-disk1.vmdk"
	diskSize, diskSum, err := fileDigest(disk, o.ManifestAlgorithm)
	if err != nil {
		return nil, err
	}
	ovf, err := renderOVF(o, diskName, diskSize)
	if err != nil {
		return nil, err
	}
	ovfName := o.Name + ".ovf"
	if o.Break == BadChecksum {
		diskSum = corrupt(diskSum)
	}
	mf := fmt.Sprintf("%s(%s)= %s\n%s(%s)= %s\n",
		o.ManifestAlgorithm, ovfName, digest(o.ManifestAlgorithm, ovf),
		o.ManifestAlgorithm, diskName, diskSum)

	var entries []entry
	if o.Break != NoOVF {
		entries = append(entries, bytesEntry(ovfName, ovf))
	}
	mfSum := ""
	if o.Break != NoManifest {
		entries = append(entries, bytesEntry(o.Name+".mf", []byte(mf)))
		s := sha256.Sum256([]byte(mf))
		mfSum = hex.EncodeToString(s[:])
	}
	if o.Break != MissingDisk {
		entries = append(entries, fileEntry(diskName, disk, diskSize))
	}
	sum, size, err := writeTar(path, entries)
	if err != nil {
		return nil, err
	}
	return &Result{Path: path, SHA256: sum, ManifestSHA256: mfSum, Size: size, Name: o.Name, Properties: o.Properties,
		DiskName: diskName, DiskSize: diskSize}, nil
}

type entry struct {
	name string
	size int64
	open func() (io.ReadCloser, error)
}

func bytesEntry(name string, b []byte) entry {
	return entry{name: name, size: int64(len(b)), open: func() (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(string(b))), nil
	}}
}

func fileEntry(name, path string, size int64) entry {
	return entry{name: name, size: size, open: func() (io.ReadCloser, error) { return os.Open(path) }}
}

// writeTar writes the entries as a ustar archive and returns the archive's
// sha256, computed while writing so a 200 MiB OVA is not read twice.
func writeTar(path string, entries []entry) (string, int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return "", 0, err
	}
	sum := sha256.New()
	cw := &countingWriter{w: io.MultiWriter(f, sum)}
	bw := bufio.NewWriterSize(cw, 1<<20)
	tw := tar.NewWriter(bw)
	err = func() error {
		for _, e := range entries {
			hdr := &tar.Header{Name: e.name, Mode: 0o644, Size: e.size, ModTime: time.Unix(0, 0), Format: tar.FormatUSTAR}
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			r, err := e.open()
			if err != nil {
				return err
			}
			_, err = io.Copy(tw, r)
			_ = r.Close()
			if err != nil {
				return err
			}
		}
		if err := tw.Close(); err != nil {
			return err
		}
		return bw.Flush()
	}()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
		return "", 0, fmt.Errorf("ovagen: writing %s: %w", path, err)
	}
	return hex.EncodeToString(sum.Sum(nil)), cw.n, nil
}

func writeNotTar(path string, o Options) (*Result, error) {
	b := []byte("this is not an OVA: an OVA is a tar archive holding an .ovf descriptor, an .mf manifest and disks\n")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return nil, err
	}
	s := sha256.Sum256(b)
	return &Result{Path: path, SHA256: hex.EncodeToString(s[:]), Size: int64(len(b)), Name: o.Name, Properties: o.Properties}, nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func newHash(alg string) hash.Hash {
	if alg == "SHA1" {
		return sha1.New()
	}
	return sha256.New()
}

func digest(alg string, b []byte) string {
	h := newHash(alg)
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

func fileDigest(path, alg string) (int64, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	h := newHash(alg)
	n, err := io.Copy(h, f)
	if err != nil {
		return 0, "", err
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// corrupt flips the first hex digit, keeping the digest well-formed so only
// the comparison, not the parser, can catch it.
func corrupt(sum string) string {
	c := "0"
	if sum[0] == '0' {
		c = "1"
	}
	return c + sum[1:]
}
