package vsphere

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
)

// ovaArchive is the importer.Archive the govmomi importer and the inspection
// read the OVF and the manifest through: small entries, read straight from
// their offset. The disks never go through it: ovaStream reads them, once,
// in tar order.
type ovaArchive struct {
	info *OVAInfo
}

func (i *OVAInfo) archive() *ovaArchive { return &ovaArchive{info: i} }

// Open matches name as govmomi's TapeArchive does (a glob on the base name,
// the importer asks for "*.ovf").
func (a *ovaArchive) Open(name string) (io.ReadCloser, int64, error) {
	e, err := a.match(name)
	if err != nil {
		return nil, 0, err
	}
	f, err := os.Open(a.info.Path)
	if err != nil {
		return nil, 0, err
	}
	return struct {
		io.Reader
		io.Closer
	}{io.NewSectionReader(f, e.offset, e.size), f}, e.size, nil
}

func (a *ovaArchive) match(name string) (tocEntry, error) {
	for _, k := range slices.Sorted(maps.Keys(a.info.entries)) {
		if ok, _ := path.Match(path.Base(name), k); ok {
			return a.info.entries[k], nil
		}
	}
	return tocEntry{}, fmt.Errorf("%s has no file %q: %w", filepath.Base(a.info.Path), name, os.ErrNotExist)
}
