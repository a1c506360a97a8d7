package vsphere

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sync"
)

// ovaArchive is the importer.Archive the govmomi importer reads the OVA
// through. Each Open reads one entry straight from its offset, verifies it
// against the manifest while it streams, and counts the bytes for progress.
type ovaArchive struct {
	info   *OVAInfo
	verify bool
	onRead func(int)

	mu     sync.Mutex
	failed error
}

// rawArchive reads entries without verification, for the inspection itself.
func (i *OVAInfo) rawArchive() *ovaArchive { return &ovaArchive{info: i} }

func (i *OVAInfo) archive(onRead func(int)) *ovaArchive {
	return &ovaArchive{info: i, verify: i.manifest != nil, onRead: onRead}
}

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
	// A large buffer turns the HTTP client's small reads into few large preads.
	src := bufio.NewReaderSize(io.NewSectionReader(f, e.offset, e.size), 1<<20)
	vr := &verifyingReader{r: src, size: e.size, ova: filepath.Base(a.info.Path), file: path.Base(e.name), onFailed: a.fail}
	if sum, ok := a.info.manifest[path.Base(e.name)]; ok && a.verify {
		vr.sum = sum
		vr.h, _ = newDigest(sum.Algorithm)
	}
	if path.Base(e.name) != a.info.OVFName {
		vr.onRead = a.onRead
	}
	return struct {
		io.Reader
		io.Closer
	}{vr, f}, e.size, nil
}

func (a *ovaArchive) match(name string) (tocEntry, error) {
	for _, k := range slices.Sorted(maps.Keys(a.info.entries)) {
		if ok, _ := path.Match(path.Base(name), k); ok {
			return a.info.entries[k], nil
		}
	}
	return tocEntry{}, fmt.Errorf("%s has no file %q: %w", filepath.Base(a.info.Path), name, os.ErrNotExist)
}

func (a *ovaArchive) fail(err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.failed == nil {
		a.failed = err
	}
}

// failure is the first verification error, which explains an upload failure
// better than the HTTP error it caused.
func (a *ovaArchive) failure() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.failed
}
