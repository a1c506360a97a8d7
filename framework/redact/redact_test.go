package redact

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
)

func TestValuesAndBase64FormsAreMasked(t *testing.T) {
	r := New("s3cr3t-P@ss")
	in := "login with s3cr3t-P@ss then " + base64.StdEncoding.EncodeToString([]byte("s3cr3t-P@ss"))
	out := r.String(in)
	if strings.Contains(out, "s3cr3t") || strings.Contains(out, base64.StdEncoding.EncodeToString([]byte("s3cr3t-P@ss"))) {
		t.Fatalf("secret survived: %q", out)
	}
	if strings.Count(out, Mask) != 2 {
		t.Fatalf("want 2 masks in %q", out)
	}
}

func TestShapes(t *testing.T) {
	r := New()
	cases := map[string]string{
		"kubeconfig key":  "    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVk=\n",
		"kubeconfig cert": "    client-certificate-data: LS0tLS1CRUdJTiBDRVJU\n",
		"token":           "    token: abcdef.0123456789abcdef\n",
		"json password":   `{"password":"hunter22"}`,
		"pem":             "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
		"bearer":          "Authorization: Bearer eyJhbGciOi.payload.sig",
		"url":             "https://administrator:hunter22@vcenter.local/sdk",
	}
	secrets := []string{"LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVk=", "LS0tLS1CRUdJTiBDRVJU", "abcdef.0123456789abcdef", "hunter22", "MIIEpAIBAAKCAQEA", "eyJhbGciOi"}
	for name, in := range cases {
		out := r.String(in)
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("%s: %q survived in %q", name, s, out)
			}
		}
		if !strings.Contains(out, Mask) {
			t.Errorf("%s: no mask in %q", name, out)
		}
	}
}

func TestWriterMasksSecretSplitAcrossWrites(t *testing.T) {
	var out bytes.Buffer
	w := New("topsecretvalue").Writer(&out)
	w.Write([]byte("a topsec"))
	w.Write([]byte("retvalue b\nnext"))
	w.Flush()
	if strings.Contains(out.String(), "topsecretvalue") || out.String() != "a "+Mask+" b\nnext" {
		t.Fatalf("got %q", out.String())
	}
}

func TestShortValuesMasked(t *testing.T) {
	if got := New("ab").String("abc ab"); got != Mask+"c "+Mask {
		t.Fatalf("short value not masked: %q", got)
	}
}

func TestWriterKeepsAShapeWholeAtTheFlush(t *testing.T) {
	// Written in 64-byte pieces, the buffer reaches the flush at exactly
	// 64 KiB and is cut 256 bytes before its end: put the shape around there.
	const shape = "token: abcdef.0123456789abcdef"
	for start := 64<<10 - 256 - len(shape); start < 64<<10-256+4; start++ {
		prefix := strings.Repeat("word ", start/5+1)[:start-1] + " "
		text := prefix + shape + " " + strings.Repeat("z", 2000)
		var out bytes.Buffer
		w := New().Writer(&out)
		for i := 0; i < len(text); i += 64 {
			w.Write([]byte(text[i:min(i+64, len(text))]))
		}
		w.Flush()
		if strings.Contains(out.String(), "0123456789abcdef") || out.Len() < 64<<10 {
			t.Fatalf("shape at %d: token survived or output lost (%d bytes)", start, out.Len())
		}
	}
}

func TestWriterNeverCutsARegisteredSecret(t *testing.T) {
	const secret = "Zq9-secret-value-Zq9"
	// The secret at every offset around the flush.
	for shift := 0; shift < 40; shift++ {
		var out bytes.Buffer
		w := New(secret).Writer(&out)
		text := strings.Repeat("x", 64<<10-300+shift*8) + secret + strings.Repeat("y", 500)
		for i := 0; i < len(text); i += 777 {
			w.Write([]byte(text[i:min(i+777, len(text))]))
		}
		w.Flush()
		if strings.Contains(out.String(), "secret-value") || !strings.Contains(out.String(), Mask) {
			t.Fatalf("shift %d: secret cut at the flush", shift)
		}
	}
}
