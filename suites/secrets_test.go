package suites

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/gomega"

	"github.com/tkg-e2e/harness/framework/redact"
)

const scanSecret = `vc-Pa55&w'o"r%d\x`

func TestScanFindsWhatTheRedactorDoesNotKnow(t *testing.T) {
	folder := t.TempDir()
	// Escaped twice: no rendering the redactor lists.
	leak := url.QueryEscape(url.QueryEscape(scanSecret))
	if err := os.WriteFile(filepath.Join(folder, "events.txt"), []byte("ok\nGET /x?p="+leak+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := &Run{ArtifactFolder: folder, runSecrets: []string{scanSecret}}
	leaks, scanned, err := scanArtifacts(env)
	if err != nil || scanned != 1 || len(leaks) != 1 || leaks[0].File != "events.txt" || leaks[0].Line != 2 {
		t.Fatalf("leaks %v, scanned %d, err %v", leaks, scanned, err)
	}
	if msg := scanFailure(folder, leaks, nil); !strings.Contains(msg, "events.txt:2") || strings.Contains(msg, "Pa55") {
		t.Errorf("message: %s", msg)
	}
}

func TestScanThatCannotReadFails(t *testing.T) {
	env := &Run{ArtifactFolder: filepath.Join(t.TempDir(), "never-created"), runSecrets: []string{scanSecret}}
	_, _, err := scanArtifacts(env)
	if err == nil {
		t.Fatal("a scan of a folder that does not exist passed")
	}
	msg := scanFailure(env.ArtifactFolder, nil, err)
	if !strings.Contains(msg, "not proven") || !strings.Contains(msg, "Fix:") {
		t.Errorf("message: %s", msg)
	}
	if _, _, err := scanArtifacts(&Run{}); err == nil {
		t.Error("a run without an artifacts folder passed the scan")
	}
}

func TestGomegaFailuresAreMasked(t *testing.T) {
	var got []string
	fail := maskedFail(redact.New(scanSecret), func(msg string, _ ...int) { got = append(got, msg) })
	g := gomega.NewGomega(fail)
	g.Expect(errors.New("login as admin with " + scanSecret + " refused")).NotTo(gomega.HaveOccurred())
	if len(got) != 1 || strings.Contains(got[0], "Pa55") || !strings.Contains(got[0], redact.Mask) {
		t.Fatalf("failure messages: %q", got)
	}
}
