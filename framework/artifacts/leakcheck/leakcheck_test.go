package leakcheck

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const secret = "s3cret&<value>-42"

func TestFindsEveryRenderingWithoutShowingIt(t *testing.T) {
	blob := base64.StdEncoding.EncodeToString([]byte("#cloud-config\npassword:  " + secret + "\n")) // 25 bytes before it: not aligned
	cases := map[string]string{
		"plain":           "login " + secret,
		"base64":          "value: " + base64.StdEncoding.EncodeToString([]byte(secret)),
		"escaped":         `<failure message="s3cret&amp;&lt;value&gt;-42"/>`,
		"base64 fragment": "userdata: " + blob,
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
