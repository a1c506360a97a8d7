package vsphere

import (
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"strings"

	"github.com/vmware/govmomi/vapi/library"
)

// ChecksumError is a file of the OVA whose content does not match its
// manifest entry. vcsim (and govc without -m) would import it anyway, and
// vCenter's own check only knows SHA1, so the harness checks on the client.
type ChecksumError struct {
	OVA, File, Algorithm, Expected, Got string
}

func (e *ChecksumError) Error() string {
	return fmt.Sprintf("%s: checksum mismatch for %s: the manifest says %s %s but the file reads as %s; "+
		"the OVA is corrupt or was changed after its manifest was made: download it again", e.OVA, e.File, e.Algorithm, e.Expected, e.Got)
}

func newDigest(alg string) (hash.Hash, error) {
	switch strings.ToUpper(alg) {
	case "SHA1":
		return sha1.New(), nil
	case "SHA256":
		return sha256.New(), nil
	case "SHA512":
		return sha512.New(), nil
	}
	return nil, fmt.Errorf("checksum algorithm %q is not supported (SHA1, SHA256, SHA512)", alg)
}

func checkDigest(ova, file string, sum *library.Checksum, b []byte) error {
	h, err := newDigest(sum.Algorithm)
	if err != nil {
		return err
	}
	h.Write(b)
	if got := hex.EncodeToString(h.Sum(nil)); !strings.EqualFold(got, sum.Checksum) {
		return &ChecksumError{OVA: ova, File: file, Algorithm: strings.ToUpper(sum.Algorithm), Expected: sum.Checksum, Got: got}
	}
	return nil
}

// verifyingReader hashes a file while it is read and, when the last byte
// arrives, compares the digest with the manifest. On a mismatch it withholds
// that last chunk and returns the error instead, so the server never receives
// a complete copy of a bad file and the upload fails.
type verifyingReader struct {
	r        io.Reader
	size     int64
	read     int64
	h        hash.Hash
	sum      *library.Checksum
	ova      string
	file     string
	onRead   func(int)
	onFailed func(error)
	// last, when set, runs once the final byte is read and before the final
	// chunk is handed on, with the file's own verdict; what it returns takes
	// that verdict's place. Checks that need the rest of the OVA (the
	// whole-file sha256) run there, so they too can hold the upload back.
	last func(error) error
	err  error
}

func (v *verifyingReader) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	if rest := v.size - v.read; int64(len(p)) > rest {
		p = p[:rest]
	}
	if len(p) == 0 {
		return 0, io.EOF
	}
	n, err := v.r.Read(p)
	v.read += int64(n)
	if v.h != nil {
		v.h.Write(p[:n])
	}
	if v.read == v.size {
		var verdict error
		if v.h != nil {
			if got := hex.EncodeToString(v.h.Sum(nil)); !strings.EqualFold(got, v.sum.Checksum) {
				verdict = &ChecksumError{OVA: v.ova, File: v.file, Algorithm: strings.ToUpper(v.sum.Algorithm), Expected: v.sum.Checksum, Got: got}
			}
		}
		if v.last != nil {
			verdict = v.last(verdict)
		}
		if verdict != nil {
			return 0, v.fail(verdict)
		}
	}
	if (err == io.EOF || err == io.ErrUnexpectedEOF) && v.read < v.size {
		return n, v.fail(fmt.Errorf("%s: %s ended after %d of %d bytes: the OVA is truncated", v.ova, v.file, v.read, v.size))
	}
	if v.onRead != nil && n > 0 {
		v.onRead(n)
	}
	if v.read == v.size && err == nil {
		err = io.EOF
	}
	return n, err
}

func (v *verifyingReader) fail(err error) error {
	v.err = err
	if v.onFailed != nil {
		v.onFailed(err)
	}
	return err
}
