package artifacts_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tkg-e2e/harness/framework/artifacts"
	"github.com/tkg-e2e/harness/framework/artifacts/artifactstest"
	"github.com/tkg-e2e/harness/framework/artifacts/leakcheck"
)

const vcPassword = "Vc-P@ss&w<rd>-1729"

func noLeaks(t *testing.T, w *artifacts.Writer, secrets ...string) {
	t.Helper()
	findings, err := leakcheck.Dir(w.Root(), secrets...)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		t.Errorf("leak: %s", f)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	if _, err := artifacts.New(artifacts.Options{Root: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "maxFileSize") {
		t.Fatalf("zero cap accepted or unhelpful error: %v", err)
	}
	if _, err := artifacts.New(artifacts.Options{MaxFileSize: 1}); err == nil {
		t.Fatal("empty root accepted")
	}
	w := artifactstest.NewWriter(t, 1024, vcPassword)
	for _, bad := range []string{"../x", "/etc/passwd", "", "a/../../b"} {
		if _, err := w.Create(bad); err == nil {
			t.Errorf("path %q accepted", bad)
		}
	}
}

func TestSecretDumpKubeconfigAndPasswordAreMaskedInFiles(t *testing.T) {
	w := artifactstest.NewWriter(t, 1<<20, vcPassword)
	secretData := base64.StdEncoding.EncodeToString([]byte("db-password-value-42"))
	keyData := base64.StdEncoding.EncodeToString([]byte("-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIKeyMaterial\n-----END EC PRIVATE KEY-----\n"))
	dump := `apiVersion: v1
data:
  password: ` + secretData + `
kind: Secret
metadata:
  name: db-credentials
  namespace: default
type: Opaque
`
	kubeconfig := `apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t
    server: https://127.0.0.1:6443
  name: kind-art
users:
- name: kind-art
  user:
    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tClientCert
    client-key-data: ` + keyData + `
    token: abcdef.0123456789abcdef
`
	must(t, w.WriteFile("resources/secrets.yaml", []byte(dump)))
	must(t, w.WriteFile("kubeconfig.yaml", []byte(kubeconfig)))
	must(t, w.WriteFile("log.txt", []byte("connecting as administrator with "+vcPassword+" and "+base64.StdEncoding.EncodeToString([]byte(vcPassword))+"\n")))

	got := artifactstest.Read(t, w, "resources/secrets.yaml")
	if !strings.Contains(got, "name: db-credentials") || !strings.Contains(got, "password: <redacted>") {
		t.Fatalf("dump lost the Secret or its key:\n%s", got)
	}
	kc := artifactstest.Read(t, w, "kubeconfig.yaml")
	if !strings.Contains(kc, "server: https://127.0.0.1:6443") {
		t.Fatalf("kubeconfig lost its server:\n%s", kc)
	}
	noLeaks(t, w, vcPassword, "db-password-value-42", "MHcCAQEEIKeyMaterial", "abcdef.0123456789abcdef", "ClientCert")
}

func TestSizeCapKeepsHeadOrTailAndAppendsNote(t *testing.T) {
	w := artifactstest.NewWriter(t, 1000, vcPassword)
	var long strings.Builder
	for i := 0; i < 500; i++ {
		fmt.Fprintf(&long, "line %04d\n", i)
	}
	must(t, w.WriteFile("dump.yaml", []byte(long.String())))
	f, err := w.CreateTail("pod.log")
	must(t, err)
	for _, line := range strings.SplitAfter(long.String(), "\n") {
		_, _ = f.Write([]byte(line))
	}
	must(t, f.Close())
	must(t, w.WriteFile("small.txt", []byte("line 0001\n")))

	head := artifactstest.Read(t, w, "dump.yaml")
	if !strings.HasPrefix(head, "line 0000\n") || strings.Contains(head, "line 0499") {
		t.Fatalf("head mode kept the wrong part:\n%s", head)
	}
	tail := artifactstest.Read(t, w, "pod.log")
	if !strings.Contains(tail, "line 0499\n") || strings.Contains(tail, "line 0000") {
		t.Fatalf("tail mode kept the wrong part:\n%s", tail)
	}
	for name, got := range map[string]string{"head": head, "tail": tail} {
		if !strings.Contains(got, "cut by the artifacts size cap of 1000 B") {
			t.Errorf("%s: no note:\n%s", name, got)
		}
		// The cap bounds the kept content; the notes come on top.
		if len(got) > 1000+300 {
			t.Errorf("%s: %d bytes, cap not applied", name, len(got))
		}
		// Lines are never cut in half.
		for _, l := range strings.Split(strings.TrimSpace(got), "\n") {
			if !strings.HasPrefix(l, "line ") && !strings.HasPrefix(l, "[harness:") {
				t.Errorf("%s: partial line %q", name, l)
			}
		}
	}
	if got := artifactstest.Read(t, w, "small.txt"); got != "line 0001\n" {
		t.Fatalf("small file changed: %q", got)
	}
	for _, r := range w.Files() {
		if r.Path == "dump.yaml" && r.Dropped == 0 {
			t.Errorf("index does not record the cut: %+v", r)
		}
	}
}

func TestCapNeverSplitsASecretIntoAnUnmaskedHalf(t *testing.T) {
	w := artifactstest.NewWriter(t, 200, vcPassword)
	key := "-----BEGIN RSA PRIVATE KEY-----\n" + strings.Repeat("MIIEpAIBAAKCAQEAsecretKeyBody\n", 40) + "-----END RSA PRIVATE KEY-----\n"
	must(t, w.WriteFile("head.txt", []byte(strings.Repeat("x\n", 50)+key)))
	f, err := w.CreateTail("tail.txt")
	must(t, err)
	_, _ = f.Write([]byte(key + strings.Repeat("y\n", 50)))
	must(t, f.Close())
	noLeaks(t, w, "secretKeyBody")
}

func TestRunnerBoundsHangingItemsAndRecordsFailures(t *testing.T) {
	w := artifactstest.NewWriter(t, 1<<20, vcPassword)
	r, err := w.NewRunner("cluster bootstrap/art", 2, 300*time.Millisecond)
	must(t, err)
	start := time.Now()
	errs := r.Run(context.Background(),
		artifacts.Item{Name: "ignores its context", Run: func(context.Context) error { time.Sleep(time.Minute); return nil }},
		artifacts.Item{Name: "fails with the password " + vcPassword, Run: func(context.Context) error { return errors.New("boom " + vcPassword) }},
		artifacts.Item{Name: "works", Run: func(context.Context) error { return w.WriteFile("ok.txt", []byte("ok\n")) }},
		artifacts.Item{Name: "panics", Run: func(context.Context) error { panic("bad") }},
		artifacts.Item{Name: "a deleted pod's log", Run: func(context.Context) error {
			return fmt.Errorf("logs: %w", &artifacts.GoneError{Why: "the pod was deleted"})
		}},
	)
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("a hanging item stalled the run for %s", took)
	}
	if errs[0] == nil || errs[1] == nil || errs[2] != nil || errs[3] == nil || errs[4] != nil {
		t.Fatalf("errs = %v", errs)
	}
	r.Skip("node logs over SSH", "no SSH key configured")
	must(t, w.WriteIndex())
	txt := artifactstest.Read(t, w, artifacts.ErrorsFile)
	for _, want := range []string{"[timed out] cluster bootstrap/art: ignores its context", "[failed] cluster bootstrap/art: fails with", "[failed] cluster bootstrap/art: panics: panic: bad", "[not collected] cluster bootstrap/art: node logs over SSH: no SSH key configured",
		"[not collected] cluster bootstrap/art: a deleted pod's log: logs: gone since it was listed: the pod was deleted",
		"3 item(s) failed or timed out, 2 not collected"} {
		if !strings.Contains(txt, want) {
			t.Errorf("errors.txt lacks %q:\n%s", want, txt)
		}
	}
	if strings.Contains(txt, "works") {
		t.Errorf("a successful item is listed:\n%s", txt)
	}
	noLeaks(t, w, vcPassword)
}

func TestWriteAfterCloseFails(t *testing.T) {
	w := artifactstest.NewWriter(t, 100, vcPassword)
	f, err := w.Create("a.txt")
	must(t, err)
	must(t, f.Close())
	if _, err := f.Write([]byte("late")); err == nil {
		t.Fatal("late write accepted")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestFilesAndFoldersArePrivate(t *testing.T) {
	root := filepath.Join(t.TempDir(), "run")
	if err := os.MkdirAll(root, 0o755); err != nil { // as a script might leave it
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "old.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := artifacts.New(artifacts.Options{Root: root, MaxFileSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"SUMMARY.md", "clusters/mgmt/pods/ns/p/c.log", "old.txt"} {
		if err := w.WriteFile(rel, []byte("text\n")); err != nil {
			t.Fatal(err)
		}
	}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		want := artifacts.FileMode
		if d.IsDir() {
			want = artifacts.DirMode
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
