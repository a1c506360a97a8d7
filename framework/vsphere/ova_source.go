package vsphere

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// localOVA is an OVA on local disk with its sha256, "" until something
// hashed the whole file (which an OVA its manifest identifies may never need).
type localOVA struct {
	path    string
	sha256  string
	size    int64
	cleanup func()
}

func isURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// displaySource is a source fit for logs and annotations: a URL loses any
// user information and query (a signed URL's token is a secret too).
func displaySource(src string) string {
	if !isURL(src) {
		return src
	}
	u, err := url.Parse(src)
	if err != nil {
		return "<unparsable URL>"
	}
	u.User = nil
	u.RawQuery = ""
	u.Fragment = ""
	return u.String()
}

// sourceBase is the OVA's file name, the default template name's origin.
func sourceBase(src string) string {
	if isURL(src) {
		if u, err := url.Parse(src); err == nil {
			return path.Base(u.Path)
		}
	}
	return filepath.Base(src)
}

// fetch makes the OVA local. A URL is downloaded once per run through dl,
// hashing as it streams (govmomi's TapeArchive would otherwise fetch the URL
// again for every file in it), so its sha256 is known at once. A local file
// is not read here: whether it needs hashing depends on its manifest, the
// config and what vCenter holds (see identity.go and ovaImport.prepare), and
// an import that needs the sha256 hashes it while uploading.
func fetch(ctx context.Context, src string, dl *Downloads, rep *reporter) (*localOVA, error) {
	if isURL(src) {
		return dl.get(ctx, src, rep)
	}
	// Opened, not just statted: an unreadable file fails here, before vCenter.
	f, err := os.Open(src)
	if err != nil {
		return nil, fmt.Errorf("OVA %s: %w", src, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, fmt.Errorf("OVA %s is a directory; give the path of the .ova file", src)
	}
	return &localOVA{path: src, size: st.Size(), cleanup: func() {}}, nil
}

// hashFile is the one read of an OVA that is not uploaded: a template of
// its name exists, and the config's sha256 is to be checked or the template
// carries only the whole-file sha256 to tell whether it came from these bytes.
func hashFile(ctx context.Context, file string, share *cpuShare) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", fmt.Errorf("OVA %s: %w", file, err)
	}
	defer f.Close()
	// 1 MiB reads instead of io.Copy's 32 KiB: a node OVA is gigabytes.
	h := sha256.New()
	counted := io.TeeReader(readerCtx{ctx, f}, countFunc(share.add))
	if _, err := io.CopyBuffer(h, counted, make([]byte, 1<<20)); err != nil {
		return "", fmt.Errorf("hashing %s: %w", file, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// scrubURLError keeps a credential-bearing URL out of an error text.
func scrubURLError(err error, src, shown string) string {
	return strings.ReplaceAll(err.Error(), src, shown)
}

type countFunc func(int)

func (c countFunc) Write(p []byte) (int, error) { c(len(p)); return len(p), nil }

// readerCtx stops a long local read when the context ends.
type readerCtx struct {
	ctx context.Context
	r   io.Reader
}

func (r readerCtx) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}
