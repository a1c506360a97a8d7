package vsphere

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/vmware/govmomi/vapi/library"
)

func verifying(data []byte, size int64, sum string) *verifyingReader {
	h, _ := newDigest("SHA256")
	return &verifyingReader{r: iotest.OneByteReader(bytes.NewReader(data)), size: size, h: h,
		sum: &library.Checksum{Algorithm: "SHA256", Checksum: sum}, ova: "x.ova", file: "disk.vmdk"}
}

func TestVerifyingReaderPassesAGoodFile(t *testing.T) {
	data := []byte("disk content")
	s := sha256.Sum256(data)
	got, err := io.ReadAll(verifying(data, int64(len(data)), strings.ToUpper(hex.EncodeToString(s[:]))))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read %q, %v", got, err)
	}
}

// The last chunk of a bad file is withheld, so the server never gets a
// complete copy and the upload fails instead of finishing.
func TestVerifyingReaderWithholdsTheLastChunkOfABadFile(t *testing.T) {
	data := []byte("disk content")
	got, err := io.ReadAll(verifying(data, int64(len(data)), strings.Repeat("0", 64)))
	var ce *ChecksumError
	if !errors.As(err, &ce) || ce.Expected != strings.Repeat("0", 64) || ce.File != "disk.vmdk" {
		t.Fatalf("want a ChecksumError, got %v", err)
	}
	if len(got) != len(data)-1 {
		t.Errorf("handed out %d of %d bytes, want all but the last", len(got), len(data))
	}
}

func TestVerifyingReaderReportsTruncation(t *testing.T) {
	_, err := io.ReadAll(verifying([]byte("short"), 10, strings.Repeat("0", 64)))
	if err == nil || !strings.Contains(err.Error(), "disk.vmdk ended after 5 of 10 bytes: the OVA is truncated") {
		t.Fatalf("got %v", err)
	}
}

func TestNewDigestRejectsUnknownAlgorithms(t *testing.T) {
	if _, err := newDigest("MD5"); err == nil || !strings.Contains(err.Error(), `"MD5" is not supported`) {
		t.Errorf("got %v", err)
	}
}
