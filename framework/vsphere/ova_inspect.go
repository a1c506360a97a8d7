package vsphere

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vmware/govmomi/ovf"
	"github.com/vmware/govmomi/ovf/importer"
	"github.com/vmware/govmomi/vapi/library"
)

// OVAInfo is what an OVA holds, read without touching vCenter. Inspecting
// first means a broken OVA fails before a VM exists that would need cleaning up.
type OVAInfo struct {
	// Path of the OVA file.
	Path string
	// Name of the virtual system in the OVF.
	Name string
	// Files in the archive, in archive order.
	Files []string
	// OVFName is the descriptor's file name; ManifestName the .mf's ("" if none).
	OVFName, ManifestName string
	// Disks are the files the OVF references, with their sizes in the archive.
	Disks []OVAFile
	// Networks are the OVF's logical network names (what a network mapping maps from).
	Networks []string
	// Properties are the OVF's vApp properties: id -> default value.
	Properties map[string]string
	// Annotation is the OVF's annotation text.
	Annotation string
	// ManifestSHA256 is the sha256 of the manifest file when its entries pin
	// every other file of the archive (but a .cert) with SHA256 or SHA512:
	// the OVA's identity then, without hashing the whole file. Empty
	// otherwise.
	ManifestSHA256 string

	props []VAppProperty
	// identityNote says why ManifestSHA256 is empty.
	identityNote string

	entries  map[string]tocEntry
	ovf      []byte
	manifest map[string]*library.Checksum
}

// OVAFile is one file of the archive.
type OVAFile struct {
	Name string
	Size int64
}

type tocEntry struct {
	name   string
	offset int64
	size   int64
}

// InspectOVA reads the table of contents, the OVF descriptor and the
// manifest of a local OVA and checks that they agree: the OVF is there and
// parses as a single VM, every file it references is in the archive with the
// size it says, the manifest (required unless allowNoManifest) covers every
// file, and the OVF matches its manifest digest. Disks are verified later,
// while they are uploaded, so they are read once.
func InspectOVA(file string, allowNoManifest bool) (*OVAInfo, error) {
	base := filepath.Base(file)
	toc, order, err := readTOC(file)
	if err != nil {
		return nil, err
	}
	info := &OVAInfo{Path: file, Files: order, entries: toc}
	if err := info.readOVF(base); err != nil {
		return nil, err
	}
	if err := info.readManifest(base, allowNoManifest); err != nil {
		return nil, err
	}
	return info, nil
}

// readTOC records where each entry's data starts, so uploads can read a disk
// straight from its offset instead of re-scanning the tar for every file as
// govmomi's TapeArchive does.
func readTOC(file string) (map[string]tocEntry, []string, error) {
	base := filepath.Base(file)
	f, err := os.Open(file)
	if err != nil {
		return nil, nil, fmt.Errorf("opening OVA: %w", err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	toc := map[string]tocEntry{}
	var order []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, io.ErrUnexpectedEOF) && len(order) > 0 {
			last := order[len(order)-1]
			return nil, nil, fmt.Errorf("%s is truncated: the file ends inside %s (%d bytes declared); download the OVA again",
				base, last, toc[last].size)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s is not an OVA: reading it as a tar archive failed (%v); "+
				"an OVA is a tar holding an .ovf descriptor, an .mf manifest and the disks: check the file was downloaded completely", base, err)
		}
		if h.Typeflag != tar.TypeReg && h.Typeflag != tar.TypeRegA {
			continue
		}
		off, err := f.Seek(0, io.SeekCurrent)
		if err != nil {
			return nil, nil, err
		}
		name := path.Base(h.Name)
		toc[name] = tocEntry{name: h.Name, offset: off, size: h.Size}
		order = append(order, name)
	}
	if len(order) == 0 {
		return nil, nil, fmt.Errorf("%s is not an OVA: it is empty or holds no files", base)
	}
	if end, err := f.Seek(0, io.SeekEnd); err == nil {
		for _, name := range order {
			if e := toc[name]; e.offset+e.size > end {
				return nil, nil, fmt.Errorf("%s is truncated: %s needs %d bytes but the file ends %d bytes into it; download the OVA again",
					base, name, e.size, end-e.offset)
			}
		}
	}
	return toc, order, nil
}

func (i *OVAInfo) readOVF(base string) error {
	names := i.withExt(".ovf")
	switch len(names) {
	case 0:
		return fmt.Errorf("%s has no .ovf descriptor; the archive holds: %s", base, strings.Join(i.Files, ", "))
	case 1:
	default:
		return fmt.Errorf("%s has %d .ovf descriptors (%s); only single-VM OVAs are supported", base, len(names), strings.Join(names, ", "))
	}
	i.OVFName = names[0]
	b, err := importer.ReadOvf(i.OVFName, i.archive())
	if err != nil {
		return fmt.Errorf("%s: reading %s: %w", base, i.OVFName, err)
	}
	i.ovf = b
	env, err := importer.ReadEnvelope(b)
	if err != nil {
		return fmt.Errorf("%s: %s is not a valid OVF descriptor: %w", base, i.OVFName, err)
	}
	if env.VirtualSystem == nil {
		return fmt.Errorf("%s: %s describes no single virtual system (a vApp/VirtualSystemCollection?); only single-VM OVAs are supported", base, i.OVFName)
	}
	vs := env.VirtualSystem
	i.Name = vs.ID
	if vs.Name != nil && *vs.Name != "" {
		i.Name = *vs.Name
	}
	if vs.Annotation != nil {
		i.Annotation = strings.TrimSpace(vs.Annotation.Annotation)
	}
	i.Properties, i.props = ovfProperties(env)
	if env.Network != nil {
		for _, n := range env.Network.Networks {
			i.Networks = append(i.Networks, n.Name)
		}
	}
	for _, ref := range env.References {
		e, ok := i.entries[path.Base(ref.Href)]
		if !ok {
			return fmt.Errorf("%s: file %q referenced by %s (File id %q) is missing from the archive; the archive holds: %s",
				base, ref.Href, i.OVFName, ref.ID, strings.Join(i.Files, ", "))
		}
		if ref.Size > 0 && int64(ref.Size) != e.size {
			return fmt.Errorf("%s: %s says %q is %d bytes but the archive holds %d bytes; the OVA is corrupt",
				base, i.OVFName, ref.Href, ref.Size, e.size)
		}
		i.Disks = append(i.Disks, OVAFile{Name: ref.Href, Size: e.size})
	}
	return nil
}

func ovfProperties(env *ovf.Envelope) (map[string]string, []VAppProperty) {
	props := map[string]string{}
	var list []VAppProperty
	for _, p := range env.VirtualSystem.Product {
		category := p.Category
		add := func(prop ovf.Property) {
			v := ""
			if prop.Default != nil {
				v = *prop.Default
			}
			props[prop.Key] = v
			list = append(list, VAppProperty{ID: prop.Key, Category: category, Value: v})
		}
		if len(p.Items) == 0 {
			for _, prop := range p.Property {
				add(prop)
			}
			continue
		}
		for _, it := range p.Items {
			if it.Category != nil {
				category = *it.Category
			}
			if it.Property != nil {
				add(*it.Property)
			}
		}
	}
	return props, list
}

// vappProperties are the OVF's properties as the template will carry them
// (the default is the value: node OVA properties are not user-configurable).
func (i *OVAInfo) vappProperties() []VAppProperty { return i.props }

func (i *OVAInfo) readManifest(base string, allowNoManifest bool) error {
	names := i.withExt(".mf")
	if len(names) == 0 {
		if allowNoManifest {
			i.identityNote = "the OVA has no manifest"
			return nil
		}
		return fmt.Errorf("%s has no .mf manifest, so its disks cannot be verified; node OVAs ship one "+
			"(set allowMissingManifest only for OVAs built without it)", base)
	}
	i.ManifestName = names[0]
	r, _, err := i.archive().Open(i.ManifestName)
	if err != nil {
		return err
	}
	defer r.Close()
	mf, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("%s: reading manifest %s: %w", base, i.ManifestName, err)
	}
	m, err := library.ReadManifest(bytes.NewReader(mf))
	if err != nil {
		return fmt.Errorf("%s: reading manifest %s: %w", base, i.ManifestName, err)
	}
	i.manifest = map[string]*library.Checksum{}
	for name, sum := range m {
		i.manifest[path.Base(name)] = sum
	}
	need := []string{i.OVFName}
	for _, d := range i.Disks {
		need = append(need, path.Base(d.Name))
	}
	for _, name := range need {
		sum, ok := i.manifest[name]
		if !ok {
			return fmt.Errorf("%s: manifest %s has no entry for %s; it lists: %s", base, i.ManifestName, name, strings.Join(slices.Sorted(maps.Keys(i.manifest)), ", "))
		}
		if _, err := newDigest(sum.Algorithm); err != nil {
			return fmt.Errorf("%s: manifest %s, entry %s: %w", base, i.ManifestName, name, err)
		}
	}
	if err := checkDigest(base, i.OVFName, i.manifest[i.OVFName], i.ovf); err != nil {
		return err
	}
	i.ManifestSHA256, i.identityNote = i.manifestIdentity(mf)
	return nil
}

func (i *OVAInfo) withExt(ext string) []string {
	var out []string
	for _, f := range i.Files {
		if strings.EqualFold(path.Ext(f), ext) {
			out = append(out, f)
		}
	}
	return out
}
