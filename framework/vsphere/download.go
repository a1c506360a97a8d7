package vsphere

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
)

// DefaultMaxDownloadSize bounds one downloaded OVA when the input sets no
// bound: node OVAs are 1-8 GiB, so 20 GiB only stops a wrong URL (a disk
// image, a directory listing that never ends) from filling the disk.
const DefaultMaxDownloadSize int64 = 20 << 30

// Downloads holds the OVAs of URL sources for one run: each URL is fetched
// once (two images or two imports of the run naming the same URL share the
// copy) into a private folder (mode 0700) that Close removes. Make one per
// run, pass it to every ImportOVAs of the run and Close it on every exit
// path (defer and the run's cleanup). ImportOVAs without one uses a private
// Downloads it closes before returning.
type Downloads struct {
	// Parent is where the download folder is created; default the OS temp dir.
	// It must not be collected as an artifact.
	Parent string
	// MaxSize bounds one download; 0 means DefaultMaxDownloadSize.
	MaxSize int64
	// Client fetches the URLs; default http.DefaultClient.
	Client *http.Client

	mu      sync.Mutex
	dir     string
	closed  bool
	entries map[string]*dlEntry
}

type dlEntry struct {
	done chan struct{}
	ova  *localOVA
	err  error
}

// Dir is the download folder, "" until the first download created it.
func (d *Downloads) Dir() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dir
}

// Close removes the folder and everything downloaded into it. It is safe to
// call more than once and from a cleanup path while nothing downloads.
func (d *Downloads) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	d.entries = nil
	if d.dir == "" {
		return nil
	}
	dir := d.dir
	d.dir = ""
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing the OVA download folder %s: %w", dir, err)
	}
	return nil
}

func (d *Downloads) maxSize() int64 {
	if d.MaxSize > 0 {
		return d.MaxSize
	}
	return DefaultMaxDownloadSize
}

// folder creates the download folder on first use, 0700: an OVA fetched
// with a signed URL is not for other users of the machine.
func (d *Downloads) folder() (string, error) {
	if d.closed {
		return "", errors.New("the run's OVA downloads were already cleaned up (Downloads.Close was called)")
	}
	if d.dir != "" {
		return d.dir, nil
	}
	parent := d.Parent
	if parent == "" {
		parent = os.TempDir()
	}
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return "", fmt.Errorf("creating the OVA download folder's parent %s: %w", parent, err)
	}
	dir, err := os.MkdirTemp(parent, "ova-downloads-")
	if err != nil {
		return "", fmt.Errorf("creating the OVA download folder in %s: %w", parent, err)
	}
	d.dir = dir
	return dir, nil
}

// get returns the local copy of src, downloading it unless this run already
// did (or is doing so for another image: the second caller waits). A failed
// download is not cached, so a later import tries again.
func (d *Downloads) get(ctx context.Context, src string, rep *reporter) (*localOVA, error) {
	d.mu.Lock()
	if d.entries == nil {
		d.entries = map[string]*dlEntry{}
	}
	if e, ok := d.entries[src]; ok {
		d.mu.Unlock()
		select {
		case <-e.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if e.err == nil {
			rep.printf("using the copy of %s this run already downloaded", displaySource(src))
		}
		return e.ova, e.err
	}
	dir, err := d.folder()
	if err != nil {
		d.mu.Unlock()
		return nil, fmt.Errorf("downloading OVA %s: %w", displaySource(src), err)
	}
	e := &dlEntry{done: make(chan struct{})}
	d.entries[src] = e
	d.mu.Unlock()

	e.ova, e.err = d.download(ctx, src, dir, rep)
	if e.err != nil {
		d.mu.Lock()
		if d.entries[src] == e {
			delete(d.entries, src)
		}
		d.mu.Unlock()
	}
	close(e.done)
	return e.ova, e.err
}

// SizeError is a download larger than the configured bound.
type SizeError struct {
	Source string
	Limit  int64
	// Size is the announced Content-Length, or 0 when the body ran over.
	Size int64
}

func (e *SizeError) Error() string {
	if e.Size > 0 {
		return fmt.Sprintf("downloading OVA %s: the server announces %s (%d bytes), more than the limit of %s; "+
			"check the URL, or raise ova.maxDownloadSize", e.Source, gib(e.Size), e.Size, gib(e.Limit))
	}
	return fmt.Sprintf("downloading OVA %s: stopped after %s, the limit (ova.maxDownloadSize); "+
		"check the URL, or raise ova.maxDownloadSize", e.Source, gib(e.Limit))
}

func gib(n int64) string {
	if n >= 1<<30 {
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	}
	return mib(n)
}

func (d *Downloads) download(ctx context.Context, src, dir string, rep *reporter) (*localOVA, error) {
	shown := displaySource(src)
	limit := d.maxSize()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
	if err != nil {
		return nil, fmt.Errorf("OVA URL %s: %v", shown, scrubURLError(err, src, shown))
	}
	client := d.Client
	if client == nil {
		client = http.DefaultClient
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("downloading OVA %s: %v", shown, scrubURLError(err, src, shown))
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("downloading OVA %s: server answered %s", shown, res.Status)
	}
	if res.ContentLength > limit {
		return nil, &SizeError{Source: shown, Limit: limit, Size: res.ContentLength}
	}
	f, err := os.CreateTemp(dir, "*-"+safeFileName(sourceBase(src)))
	if err != nil {
		return nil, fmt.Errorf("downloading OVA %s: creating a local copy in %s: %w", shown, dir, err)
	}
	remove := func() { _ = os.Remove(f.Name()) }
	rep.printf("downloading %s to %s (limit %s)", shown, f.Name(), gib(limit))
	tr := rep.transfer("downloading", sourceBase(src), res.ContentLength)
	h := sha256.New()
	// One byte over the limit tells a body that runs over from one that ends at it.
	body := io.LimitReader(readerCtx{ctx, res.Body}, limit+1)
	n, err := io.CopyBuffer(io.MultiWriter(f, h), io.TeeReader(body, countFunc(tr.add)), make([]byte, 1<<20))
	_, summary, _ := tr.finish()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil:
	case n > limit:
		remove()
		return nil, &SizeError{Source: shown, Limit: limit}
	case res.ContentLength > 0 && n != res.ContentLength:
		err = fmt.Errorf("got %d of %d bytes", n, res.ContentLength)
	}
	if err != nil {
		remove()
		return nil, fmt.Errorf("downloading OVA %s: %v", shown, scrubURLError(err, src, shown))
	}
	rep.printf("downloaded %s", summary)
	// The copy belongs to the Downloads and goes with its Close.
	return &localOVA{path: f.Name(), sha256: hex.EncodeToString(h.Sum(nil)), size: n, cleanup: func() {}}, nil
}

func safeFileName(s string) string {
	b := []rune(filepath.Base(s))
	for i, r := range b {
		if r == '*' || r == os.PathSeparator {
			b[i] = '_'
		}
	}
	if len(b) == 0 || string(b) == "." || string(b) == "/" {
		return "ova"
	}
	return string(b)
}
