package leakcheck

import (
	"encoding/base64"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

const secret = "s3cret&<value>-42"

func TestFindsEveryRenderingWithoutShowingIt(t *testing.T) {
	blob := base64.StdEncoding.EncodeToString([]byte("#cloud-config\npassword:  " + secret + "\n")) // 25 bytes before it: not aligned
	cases := map[string]string{
		"plain":            "login " + secret,
		"base64-decoded":   "value: " + base64.StdEncoding.EncodeToString([]byte(secret)),
		"entity-unescaped": `<failure message="s3cret&amp;&lt;value&gt;-42"/>`,
		"base64-decoded)":  "userdata: " + blob,
	}
	for kind, text := range cases {
		got := Text("f", text, secret)
		if len(got) == 0 {
			t.Errorf("%s: not found in %q", kind, text)
			continue
		}
		if !strings.Contains(got[0].What, kind) {
			t.Errorf("%s: reported as %q", kind, got[0].What)
		}
		for _, f := range got {
			if strings.Contains(f.String(), "s3cret") {
				t.Errorf("%s: the finding shows the secret: %s", kind, f)
			}
		}
	}
}

func TestFindsUnmaskedShapesAndAcceptsMasks(t *testing.T) {
	bad := "apiVersion: v1\nkind: Secret\ndata:\n  token: c2VjcmV0LXRva2Vu\n"
	got := Text("secret.yaml", bad)
	if len(got) != 1 || got[0].Line != 4 || strings.Contains(got[0].String(), "c2VjcmV0LXRva2Vu") {
		t.Fatalf("got %v", got)
	}
	for name, ok := range map[string]string{
		"yaml": "apiVersion: v1\nkind: Secret\ndata:\n  token: <redacted>\n",
		"html": "<pre>token: &lt;redacted&gt;</pre>",
		"json": `{"password":"\u003credacted\u003e"}`,
	} {
		if got := Text(name, ok); len(got) != 0 {
			t.Errorf("%s: masked text reported: %v", name, got)
		}
	}
}

func TestDirReportsRelativePaths(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "a", "log.txt"), []byte("x\ny "+secret+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Dir(root, secret)
	if err != nil || len(got) != 1 || got[0].File != "a/log.txt" || got[0].Line != 2 {
		t.Fatalf("got %v, %v", got, err)
	}
}

func TestMasksAreNotFindings(t *testing.T) {
	// A secret that is part of the word in the mask.
	if got := Text("f", "pw <redacted> and &lt;redacted&gt;", "dact"); len(got) != 0 {
		t.Fatalf("a mask was reported: %v", got)
	}
}

func TestMultiLineSecretFoundLineByLine(t *testing.T) {
	key := "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAx7e1Yk3uLqvPZs0gN4f\n-----END RSA PRIVATE KEY-----\n"
	got := Text("f", "log: x\nline MIIEpAIBAAKCAQEAx7e1Yk3uLqvPZs0gN4f\n", key)
	if len(got) != 1 || got[0].Line != 2 {
		t.Fatalf("got %v", got)
	}
	// The armour alone is not the key.
	if got := Text("f", "-----BEGIN RSA PRIVATE KEY-----\n<redacted>\n-----END RSA PRIVATE KEY-----\n", key); len(got) != 0 {
		t.Fatalf("armour reported: %v", got)
	}
}

func TestUnreadableFolderAndFileAreErrors(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every file")
	}
	for _, c := range []struct{ name, path string }{{"folder", "sub"}, {"file", "sub/log.txt"}} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			if err := os.MkdirAll(filepath.Join(root, "sub"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "sub", "log.txt"), []byte("nothing secret\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "readable.txt"), []byte("x "+secret+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(root, c.path)
			if err := os.Chmod(p, 0); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(p, 0o700) })
			got, err := Dir(root, secret)
			if err == nil {
				t.Fatalf("scan of an unreadable %s returned no error", c.name)
			}
			if !strings.Contains(err.Error(), c.path) {
				t.Errorf("error does not name %s: %v", c.path, err)
			}
			if len(got) != 1 || got[0].File != "readable.txt" {
				t.Errorf("what could be read was not scanned: %v", got)
			}
		})
	}
}

// failingFS fails to read one path, as a folder or file without
// permission does (the tests may run as root, who reads everything).
type failingFS struct {
	fstest.MapFS
	bad string
}

func (f failingFS) Open(name string) (fs.File, error) {
	if name == f.bad {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	return f.MapFS.Open(name)
}

func (f failingFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if name == f.bad {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	return f.MapFS.ReadDir(name)
}

func (f failingFS) ReadFile(name string) ([]byte, error) {
	if name == f.bad {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	return f.MapFS.ReadFile(name)
}

func TestUnreadableEntriesAreErrorsWhoeverRuns(t *testing.T) {
	files := fstest.MapFS{
		"sub/log.txt":  {Data: []byte("nothing secret\n")},
		"readable.txt": {Data: []byte("x " + secret + "\n")},
	}
	for _, bad := range []string{"sub", "sub/log.txt"} {
		got, err := FS(failingFS{files, bad}, "/run", secret)
		if err == nil || !strings.Contains(err.Error(), "/run/"+bad) {
			t.Errorf("%s unreadable: error %v", bad, err)
		}
		if len(got) != 1 || got[0].File != "readable.txt" {
			t.Errorf("%s unreadable: what could be read was not scanned: %v", bad, got)
		}
	}
	// A link to nothing is a file the scan cannot read.
	root := t.TempDir()
	if err := os.Symlink(filepath.Join(root, "gone"), filepath.Join(root, "console.log")); err != nil {
		t.Fatal(err)
	}
	if _, err := Dir(root, secret); err == nil || !strings.Contains(err.Error(), "console.log") {
		t.Errorf("dangling link: error %v", err)
	}
}

func TestMissingRootIsAnError(t *testing.T) {
	if _, err := Dir(filepath.Join(t.TempDir(), "nope"), secret); err == nil {
		t.Fatal("scan of a missing folder returned no error")
	}
}
