// Package ovagen writes node OVAs shaped like the ones TKG ships (an OVF with
// the CAPI vApp properties, a SHA256 manifest and a disk), so the ova stage,
// its tests and the benchmark can run without a multi-gigabyte binary
// committed to the repository. It can also write broken OVAs, one defect at a
// time, to prove that the importer rejects them with a clear message.
package ovagen

import "fmt"

// CAPICategory is the ProductSection category under which image-builder puts
// the properties that TKG and CAPV read from a template.
const CAPICategory = "Cluster API Provider (CAPI)"

// DiskFormat is how the disk inside the OVA is encoded.
type DiskFormat string

const (
	// StreamOptimized is the compressed sparse VMDK that vCenter requires in an
	// OVA. Written with govmomi's vmdk writer, which compresses every grain, so
	// random data is slow to produce (about 30 MiB/s).
	StreamOptimized DiskFormat = "stream-optimized"
	// Raw stores the bytes as they are. vcsim only hashes what it receives, so
	// this is enough for simulator runs and is fast to produce for large
	// benchmarks; a real vCenter would reject it.
	Raw DiskFormat = "raw"
)

// Breakage selects one defect to build into the OVA.
type Breakage string

const (
	// NotBroken writes a valid OVA.
	NotBroken Breakage = ""
	// NotTar writes bytes that are not a tar archive at all.
	NotTar Breakage = "not-tar"
	// NoOVF leaves the OVF descriptor out of the archive.
	NoOVF Breakage = "no-ovf"
	// MissingDisk leaves the disk out while the OVF still references it.
	MissingDisk Breakage = "missing-disk"
	// BadChecksum writes a manifest whose digest for the disk is wrong, as if
	// the disk had been corrupted after the manifest was made.
	BadChecksum Breakage = "bad-checksum"
	// NoManifest leaves the .mf out.
	NoManifest Breakage = "no-manifest"
	// UnsupportedDevice adds a hardware item of a resource type vSphere does
	// not know, which CreateImportSpec reports in its result's Error list.
	UnsupportedDevice Breakage = "unsupported-device"
)

// Options describe the OVA to write. The zero value plus a Name gives a small
// valid OVA with DefaultProperties.
type Options struct {
	// Name of the virtual system and the base name of the files in the archive.
	Name string
	// Properties are written as vApp properties in the CAPI ProductSection,
	// keyed by property id (VERSION, KUBERNETES_SEMVER, ...). Nil means
	// DefaultProperties().
	Properties map[string]string
	// DataSize is how many bytes of pseudo-random (incompressible) data the
	// disk holds; rounded up to the 64 KiB grain. Defaults to 1 MiB.
	DataSize int64
	// DiskCapacity is the virtual size of the disk; defaults to DataSize
	// rounded up to a MiB (TKG images say 20 GiB while holding about 1.5 GiB).
	DiskCapacity int64
	// Seed makes the disk content, and so the OVA sha256, differ between OVAs.
	Seed uint64
	// Format of the disk; defaults to StreamOptimized.
	Format DiskFormat
	// ManifestAlgorithm is SHA256 (default, as TKG node OVAs ship) or SHA1.
	ManifestAlgorithm string
	// Break builds one defect into the OVA.
	Break Breakage
}

// DefaultProperties returns the properties of a TKG Ubuntu node image for
// Kubernetes v1.33.1, the values a release-qualification config would expect.
func DefaultProperties() map[string]string {
	return map[string]string{
		"VERSION":           "v1.33.1+vmware.1-tkg.1-1c6f8e3d9a2b4c5d6e7f8091a2b3c4d5",
		"KUBERNETES_SEMVER": "v1.33.1+vmware.1",
		"DISTRO_NAME":       "ubuntu",
		"DISTRO_VERSION":    "22.04",
		"DISTRO_ARCH":       "amd64",
	}
}

const (
	grain = 64 << 10
	mib   = 1 << 20
)

func (o Options) withDefaults() (Options, error) {
	if o.Name == "" {
		return o, fmt.Errorf("ovagen: Options.Name is required (it names the virtual system and the files in the OVA)")
	}
	if o.Properties == nil {
		o.Properties = DefaultProperties()
	}
	if o.DataSize <= 0 {
		o.DataSize = mib
	}
	o.DataSize = roundUp(o.DataSize, grain)
	if o.DiskCapacity <= 0 {
		o.DiskCapacity = o.DataSize
	}
	o.DiskCapacity = roundUp(o.DiskCapacity, mib)
	if o.DiskCapacity < o.DataSize {
		return o, fmt.Errorf("ovagen: DiskCapacity %d is smaller than DataSize %d", o.DiskCapacity, o.DataSize)
	}
	switch o.Format {
	case "":
		o.Format = StreamOptimized
	case StreamOptimized, Raw:
	default:
		return o, fmt.Errorf("ovagen: unknown disk format %q (use %q or %q)", o.Format, StreamOptimized, Raw)
	}
	switch o.ManifestAlgorithm {
	case "":
		o.ManifestAlgorithm = "SHA256"
	case "SHA256", "SHA1":
	default:
		return o, fmt.Errorf("ovagen: manifest algorithm %q not supported (use SHA256 or SHA1)", o.ManifestAlgorithm)
	}
	switch o.Break {
	case NotBroken, NotTar, NoOVF, MissingDisk, BadChecksum, NoManifest, UnsupportedDevice:
	default:
		return o, fmt.Errorf("ovagen: unknown breakage %q", o.Break)
	}
	return o, nil
}

func roundUp(n, to int64) int64 { return (n + to - 1) / to * to }
