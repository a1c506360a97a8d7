package vsphere_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tkg-e2e/harness/framework/vsphere"
	"github.com/tkg-e2e/harness/framework/vsphere/ovagen"
)

func TestImportFromURLDownloadsOnceAndCleansUp(t *testing.T) {
	s := connect(t)
	ova := writeOVA(t, "node-url", ovagen.Options{})
	gets := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/builds/node-url.ova" {
			http.NotFound(w, r)
			return
		}
		gets++
		http.ServeFile(w, r, ova.Path)
	}))
	defer srv.Close()
	dl := t.TempDir()
	var progress syncBuffer
	// Credentials and a token in the URL must not reach progress, results or the annotation.
	src := strings.Replace(srv.URL, "http://", "http://builder:s3cret@", 1) + "/builds/node-url.ova?token=t0ken"
	r, err := importOne(t, s, vsphere.OVA{Source: src, SHA256: ova.SHA256}, func(in *vsphere.ImportInput) { in.DownloadDir, in.Progress = dl, &progress })
	if err != nil {
		t.Fatal(err)
	}
	if r.Action != vsphere.Imported || r.SHA256 != ova.SHA256 || gets != 1 {
		t.Errorf("result %+v after %d GETs; want imported with sha %s after 1 GET", r, gets, ova.SHA256)
	}
	vm := vmByName(t, s, "node-url")
	for _, text := range []string{progress.String(), r.Source, vm.Config.Annotation} {
		if strings.Contains(text, "s3cret") || strings.Contains(text, "t0ken") {
			t.Errorf("URL secret leaked into %q", text)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dl, "*")); len(left) != 0 {
		t.Errorf("download dir not cleaned: %v", left)
	}

	_, err = importOne(t, s, vsphere.OVA{Source: srv.URL + "/builds/gone.ova", SHA256: ova.SHA256}, func(in *vsphere.ImportInput) { in.DownloadDir = dl })
	mustContain(t, err, "downloading OVA "+srv.URL+"/builds/gone.ova: server answered 404 Not Found")
}

func TestDirectoryIsNotAnOVA(t *testing.T) {
	s := connect(t)
	dir := t.TempDir()
	_ = os.Mkdir(filepath.Join(dir, "x.ova"), 0o755)
	_, err := importOne(t, s, vsphere.OVA{Source: filepath.Join(dir, "x.ova")}, nil)
	mustContain(t, err, "is a directory; give the path of the .ova file")
}
