package vsphere_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tkg-e2e/harness/framework/vsphere"
	"github.com/tkg-e2e/harness/framework/vsphere/ovagen"
)

// ovaServer serves file at /node-dl.ova in 64 KiB chunks with a short pause
// between them (so progress lines appear), counting GETs. Without a length
// it sends no Content-Length (chunked).
func ovaServer(t *testing.T, file string, withLength bool) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var gets atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gets.Add(1)
		if withLength {
			w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		}
		for off := 0; off < len(b); off += 64 << 10 {
			_, _ = w.Write(b[off:min(off+64<<10, len(b))])
			w.(http.Flusher).Flush()
			time.Sleep(2 * time.Millisecond)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &gets
}

// Two images with the same URL, and a second import of the run, share one
// download; progress shows bytes, total and rate; Close removes the folder.
func TestURLSourceIsDownloadedOncePerRun(t *testing.T) {
	s := connect(t)
	ova := writeOVA(t, "node-dl", ovagen.Options{})
	srv, gets := ovaServer(t, ova.Path, true)
	url := srv.URL + "/node-dl.ova"
	a, b := uniq("node-dl-a"), uniq("node-dl-b")
	dl := &vsphere.Downloads{Parent: filepath.Join(t.TempDir(), "not-artifacts")}
	defer dl.Close()
	var progress syncBuffer
	in := input(&progress, vsphere.OVA{Source: url, Name: a, SHA256: ova.SHA256}, vsphere.OVA{Source: url, Name: b, SHA256: ova.SHA256})
	in.Downloads, in.ProgressEvery, in.RunID = dl, 5*time.Millisecond, "dl-run"
	res, err := s.ImportOVAs(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Action != vsphere.Imported || r.SHA256 != ova.SHA256 {
			t.Errorf("%+v, want imported with sha %s", r, ova.SHA256)
		}
	}
	dir := dl.Dir()
	st, err := os.Stat(dir)
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("download folder %s: %v, mode %v; want it to exist with 0700", dir, err, st.Mode())
	}
	// The second OVA invocation of the run (the stage's reuse check) downloads nothing.
	in.Progress = &progress
	res, err = s.ImportOVAs(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if n := gets.Load(); n != 1 || res[0].Action != vsphere.Reused || res[1].Action != vsphere.Reused {
		t.Errorf("%d GETs for 2 images and 2 imports (want 1); second import: %s, %s", n, res[0].Action, res[1].Action)
	}
	out := progress.String()
	mustContain(t, errString(out), "downloading "+url+" to "+dir+"/", "(limit 20.0 GiB)",
		"downloading node-dl.ova ", " / 1.0 MiB (", "MiB/s", "downloaded 1.0 MiB in", "using the copy of "+url+" this run already downloaded")
	if err := dl.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("download folder %s still there after Close: %v", dir, err)
	}
}

// Without a Downloads, the import's own folder goes on failure too; the
// size bound stops both an announced and a chunked body; a sha256 mismatch
// is found on the download before any vCenter call.
func TestURLSourceBoundsAndChecksBeforeVCenter(t *testing.T) {
	s := connect(t)
	calls := countCalls(s)
	ova := writeOVA(t, "node-dl-bad", ovagen.Options{})
	withLen, _ := ovaServer(t, ova.Path, true)
	chunked, _ := ovaServer(t, ova.Path, false)
	parent := t.TempDir()
	for name, c := range map[string]struct {
		src, sha string
		max      int64
		want     []string
	}{
		"content-length over the bound": {withLen.URL + "/node-dl-bad.ova", ova.SHA256, 64 << 10,
			[]string{"the server announces 1.0 MiB (", "more than the limit of 0.1 MiB", "raise ova.maxDownloadSize"}},
		"chunked body over the bound": {chunked.URL + "/node-dl-bad.ova", ova.SHA256, 64 << 10,
			[]string{"stopped after 0.1 MiB, the limit (ova.maxDownloadSize)"}},
		"sha256 mismatch": {withLen.URL + "/node-dl-bad.ova", strings.Repeat("0", 64), 0,
			[]string{"has sha256 " + ova.SHA256 + " but the config expects " + strings.Repeat("0", 64), "nothing was sent to vCenter"}},
	} {
		t.Run(name, func(t *testing.T) {
			calls.n.Store(0)
			_, err := importOne(t, s, vsphere.OVA{Source: c.src, SHA256: c.sha}, func(in *vsphere.ImportInput) {
				in.DownloadDir, in.MaxDownloadSize = parent, c.max
			})
			mustContain(t, err, c.want...)
			var se *vsphere.SizeError
			if c.max > 0 && !errors.As(err, &se) {
				t.Errorf("want a *SizeError, got %T", errors.Unwrap(err))
			}
			if n := calls.n.Load(); n != 0 {
				t.Errorf("%d vCenter calls; want none", n)
			}
			if left, _ := filepath.Glob(filepath.Join(parent, "*")); len(left) != 0 {
				t.Errorf("download folder not removed: %v", left)
			}
			if vmByName(t, s, "node-dl-bad") != nil {
				t.Error("a VM was created")
			}
		})
	}
}

// An interrupted download (Ctrl-C, suite timeout) removes its file and the
// private download folder.
func TestInterruptedDownloadLeavesNothing(t *testing.T) {
	s := connect(t)
	ova := writeOVA(t, "node-dl-cut", ovagen.Options{DataSize: 4 << 20})
	srv, _ := ovaServer(t, ova.Path, true)
	parent := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &cancelOnWrite{trigger: "downloading node-dl-cut.ova", cancel: cancel}
	in := input(nil, vsphere.OVA{Source: srv.URL + "/node-dl-cut.ova", SHA256: ova.SHA256})
	in.Progress, in.ProgressEvery, in.DownloadDir = out, 5*time.Millisecond, parent
	_, err := s.ImportOVAs(ctx, in)
	mustContain(t, err, "context canceled")
	if left, _ := filepath.Glob(filepath.Join(parent, "*")); len(left) != 0 {
		t.Errorf("interrupted download left %v:\n%s", left, out.String())
	}
}
