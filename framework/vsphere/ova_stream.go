package vsphere

import (
	"archive/tar"
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/vmware/govmomi/nfc"
	"github.com/vmware/govmomi/vapi/library"
	"github.com/vmware/govmomi/vim25/soap"
)

// ovaStream reads an OVA exactly once, front to back, and hands each disk
// to its lease item as the tar passes it. The same bytes feed every manifest
// digest and, when the import wants it and it is not known yet, the
// whole-file sha256, so an import costs one read of the file instead of a
// hashing pass before the upload. An OVA identified by its manifest is not
// hashed as a whole: that hash would double the CPU the digests cost.
//
// The lease imposes no order: every item is its own HTTP request to its own
// URL, so the disks go up in the order the tar holds them, whatever order
// the lease lists them in.
type ovaStream struct {
	ova      string
	f        *os.File
	tar      *tar.Reader
	raw      *hashingReader
	manifest map[string]*library.Checksum
	expect   string
	onDisk   func(int)

	// The end is reached inside a read by the HTTP transport's goroutine,
	// which an upload that failed early may still be running; endMu hands
	// its result over.
	endMu  sync.Mutex
	sum    string
	ended  bool
	endErr error

	mu     sync.Mutex
	failed error
}

// hashingReader is the raw file: counted for the CPU share, hashed when the
// whole-file sha256 is to be learnt.
type hashingReader struct {
	r     io.Reader
	h     hash.Hash
	read  atomic.Int64
	share *cpuShare
}

func (h *hashingReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	if n > 0 {
		if h.h != nil {
			h.h.Write(p[:n])
		}
		h.read.Add(int64(n))
		h.share.add(n)
	}
	return n, err
}

// openStream opens src for its one read. learn says whether to hash the
// whole file (not when something already did, as the download does, nor
// when the manifest identifies the OVA and the config demands no sha256);
// expect is the sha256 the config demands ("" for none).
func openStream(ctx context.Context, src *localOVA, info *OVAInfo, learn bool, expect string, share *cpuShare, onDisk func(int)) (*ovaStream, error) {
	f, err := os.Open(src.path)
	if err != nil {
		return nil, fmt.Errorf("opening OVA: %w", err)
	}
	raw := &hashingReader{r: bufio.NewReaderSize(readerCtx{ctx, f}, 1<<20), share: share}
	if learn {
		raw.h = sha256.New()
	}
	s := &ovaStream{ova: filepath.Base(src.path), f: f, tar: tar.NewReader(raw), raw: raw,
		manifest: info.manifest, expect: strings.ToLower(expect), onDisk: onDisk, sum: src.sha256}
	return s, nil
}

func (s *ovaStream) close() { _ = s.f.Close() }

// sha256 is the whole-file digest, "" until the stream reached the end, and
// for good when it does not hash the file.
func (s *ovaStream) sha256() string {
	s.endMu.Lock()
	defer s.endMu.Unlock()
	return s.sum
}

// bytesRead is how much of the file the stream has read.
func (s *ovaStream) bytesRead() int64 { return s.raw.read.Load() }

// upload streams the tar once and uploads each entry a lease item wants as
// it passes. Entries the lease does not want are read through (hashed and,
// when the manifest lists them, verified). The end of the stream is checked
// inside the read of the last wanted entry's final chunk, so a defect found
// only there still keeps the server from receiving a complete upload.
func (s *ovaStream) upload(ctx context.Context, lease *nfc.Lease, items []nfc.FileItem) error {
	pending := map[string]nfc.FileItem{}
	for _, it := range items {
		pending[path.Base(it.Path)] = it
	}
	for len(pending) > 0 {
		h, err := s.tar.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return s.fail(s.readError(err))
		}
		if h.Typeflag != tar.TypeReg && h.Typeflag != tar.TypeRegA {
			continue
		}
		name := path.Base(h.Name)
		item, ok := pending[name]
		if !ok {
			if err := s.passBy(name, h.Size); err != nil {
				return s.fail(err)
			}
			continue
		}
		delete(pending, name)
		vr := s.entry(name, h.Size)
		if len(pending) == 0 {
			vr.last = func(verdict error) error {
				// The rest of the OVA is read first, so the sha256 is known
				// even when this disk is the one that is bad.
				end := s.end()
				return firstErr(verdict, end)
			}
		}
		if err := lease.Upload(ctx, item, vr, soap.Upload{ContentLength: h.Size}); err != nil {
			if f := s.failure(); f != nil {
				return f
			}
			return fmt.Errorf("uploading %s: %w", item.Path, err)
		}
	}
	if len(pending) > 0 {
		var missing []string
		for n := range pending {
			missing = append(missing, n)
		}
		return s.fail(fmt.Errorf("%s ended without %s, which vCenter asks for", s.ova, strings.Join(missing, ", ")))
	}
	return s.end()
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func (s *ovaStream) entry(name string, size int64) *verifyingReader {
	vr := &verifyingReader{r: s.tar, size: size, ova: s.ova, file: name, onRead: s.onDisk, onFailed: s.record}
	if sum, ok := s.manifest[name]; ok {
		vr.sum = sum
		vr.h, _ = newDigest(sum.Algorithm)
	}
	return vr
}

// passBy reads an entry no lease item wants, verifying it when the manifest
// lists it (the OVF, checked at inspection already: a few KiB).
func (s *ovaStream) passBy(name string, size int64) error {
	vr := s.entry(name, size)
	vr.onRead = nil // not upload progress
	_, err := io.CopyBuffer(io.Discard, vr, make([]byte, 32<<10))
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return err
}

// end reads what is left after the last wanted entry (other entries, the
// tar trailer, any padding), then checks the whole-file sha256 against the
// config. It runs once; later calls return the same verdict.
func (s *ovaStream) end() error {
	s.endMu.Lock()
	defer s.endMu.Unlock()
	if s.ended {
		return s.endErr
	}
	s.ended = true
	s.endErr = s.readRest()
	if s.endErr == nil && s.expect != "" && s.sum != s.expect {
		s.endErr = fmt.Errorf("OVA %s has sha256 %s but the config expects %s: wrong or corrupt download "+
			"(found at the end of the upload, which was stopped before its last bytes)", s.ova, s.sum, s.expect)
	}
	return s.endErr
}

func (s *ovaStream) readRest() error {
	for {
		h, err := s.tar.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return s.readError(err)
		}
		if h.Typeflag == tar.TypeReg || h.Typeflag == tar.TypeRegA {
			if err := s.passBy(path.Base(h.Name), h.Size); err != nil {
				return err
			}
		}
	}
	if _, err := io.CopyBuffer(io.Discard, s.raw, make([]byte, 32<<10)); err != nil {
		return fmt.Errorf("reading %s: %w", s.ova, err)
	}
	if s.raw.h != nil {
		s.sum = hex.EncodeToString(s.raw.h.Sum(nil))
	}
	return nil
}

func (s *ovaStream) readError(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%s is truncated: the file ended while it was uploaded; download the OVA again", s.ova)
	}
	return fmt.Errorf("reading %s: %w", s.ova, err)
}

func (s *ovaStream) fail(err error) error {
	s.record(err)
	return err
}

func (s *ovaStream) record(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed == nil {
		s.failed = err
	}
}

// failure is the first verification error, which explains an upload
// failure better than the HTTP error it caused.
func (s *ovaStream) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}
