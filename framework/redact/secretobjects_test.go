package redact

import (
	"encoding/base64"
	"strings"
	"testing"
)

const secretValue = "c3VwZXJzZWNyZXQtdmFsdWU=" // base64 of "supersecret-value", as a Secret holds it

func assertMasked(t *testing.T, name, out string, keep ...string) {
	t.Helper()
	for _, leaked := range []string{secretValue, "supersecret-value", "line-two-of-value"} {
		if strings.Contains(out, leaked) {
			t.Errorf("%s: %q survived:\n%s", name, leaked, out)
		}
	}
	for _, k := range keep {
		if !strings.Contains(out, k) {
			t.Errorf("%s: %q should be kept:\n%s", name, k, out)
		}
	}
	if again := New().String(out); again != out {
		t.Errorf("%s: redaction is not stable, a second pass changed:\n%s\n---\n%s", name, out, again)
	}
}

func TestSecretYAMLDumpIsMasked(t *testing.T) {
	in := `apiVersion: v1
data:
  password: ` + secretValue + `
  ca.crt: ` + secretValue + `
kind: Secret
metadata:
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: |
      {"apiVersion":"v1","data":{"password":"` + secretValue + `"},"kind":"Secret","metadata":{"name":"db"}}
  name: db
  namespace: default
stringData:
  config.yaml: |
    user: admin
    pass: supersecret-value
    line-two-of-value
type: Opaque
`
	out := New().String(in)
	assertMasked(t, "yaml", out, "name: db", "password: "+Mask, "ca.crt: "+Mask, "config.yaml: "+Mask, "type: Opaque", `"password":"`+Mask+`"`)
}

func TestSecretInListAndMultiDocIsMaskedButConfigMapIsKept(t *testing.T) {
	in := `apiVersion: v1
kind: ConfigMap
data:
  greeting: hello
---
apiVersion: v1
items:
- apiVersion: v1
  data:
    token: ` + secretValue + `
  kind: Secret
  metadata:
    name: a
kind: List
`
	out := New().String(in)
	assertMasked(t, "list", out, "greeting: hello", "token: "+Mask, "name: a")
}

func TestSecretJSONIsMasked(t *testing.T) {
	pretty := `{
    "apiVersion": "v1",
    "data": {
        "password": "` + secretValue + `",
        "user": "` + secretValue + `"
    },
    "kind": "Secret",
    "metadata": {
        "annotations": {
            "kubectl.kubernetes.io/last-applied-configuration": "{\"apiVersion\":\"v1\",\"data\":{\"password\":\"` + secretValue + `\"},\"kind\":\"Secret\"}\n"
        },
        "name": "db"
    }
}`
	out := New().String(pretty)
	assertMasked(t, "pretty json", out, `"name": "db"`, `"password": "`+Mask+`",`, `\"password\":\"`+Mask+`\"`)

	compact := `I0101 event object={"kind":"Secret","apiVersion":"v1","metadata":{"name":"x"},"data":{"k":"` + secretValue + `"}} next`
	assertMasked(t, "log line", New().String(compact), `"k":"`+Mask+`"`, "next")
}

func TestCutSecretAndPEMAreMasked(t *testing.T) {
	cut := `{"kind":"Secret","data":{"k":"` + secretValue
	assertMasked(t, "cut json", New().String(cut))

	head := "key: |\n  -----BEGIN RSA PRIVATE KEY-----\n  MIIEowIBAAKCAQEAsupersecret\n  QWERTYsupersecret"
	if out := New().String(head); strings.Contains(out, "MIIEow") || strings.Contains(out, "QWERTY") {
		t.Fatalf("orphan BEGIN body survived: %q", out)
	}
	tail := "QWERTYsupersecret\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\nnext line"
	out := New().String(tail)
	if strings.Contains(out, "MIIEow") || strings.Contains(out, "QWERTY") || !strings.Contains(out, "next line") {
		t.Fatalf("orphan END body survived or too much masked: %q", out)
	}
}

func TestTextWithoutSecretKindIsUntouched(t *testing.T) {
	in := "apiVersion: v1\nkind: ConfigMap\ndata:\n  a: b\n"
	if out := New().String(in); out != in {
		t.Fatalf("changed: %q", out)
	}
}

func TestFormsCoverEscapedAndEmbeddedRenderings(t *testing.T) {
	pw := `p&ss<w>rd"1234`
	r := New(pw)
	for name, in := range map[string]string{
		"xml":  "<failure message=\"login p&amp;ss&lt;w&gt;rd&#34;1234 failed\"/>",
		"json": `{"msg":"p\u0026ss\u003cw\u003erd\"1234"}`,
		"html": "p&amp;ss&lt;w&gt;rd&#34;1234",
	} {
		if out := r.String(in); strings.Contains(out, "ss&lt;w&gt;rd") || strings.Contains(out, `ss\u003cw`) {
			t.Errorf("%s form survived: %q", name, out)
		}
	}
	// The password inside a larger base64 blob, at each byte alignment.
	for _, prefix := range []string{"", "x", "xy", "xyz"} {
		blob := base64.StdEncoding.EncodeToString([]byte(prefix + "user: admin\npassword: " + pw + "\nend\n"))
		out := r.String("userdata: " + blob)
		if out == "userdata: "+blob {
			t.Errorf("prefix %q: password embedded in base64 not masked", prefix)
		}
	}
}

func TestCommandLineCredentialsAreMasked(t *testing.T) {
	in := "kubeadm join 10.0.0.1:6443 --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash sha256:1234\nlogin --password=hunter2222 done"
	out := New().String(in)
	if strings.Contains(out, "0123456789abcdef") || strings.Contains(out, "hunter2222") || !strings.Contains(out, "sha256:1234") {
		t.Fatalf("got %q", out)
	}
	if New().String(out) != out {
		t.Fatalf("not stable: %q", out)
	}
}

func TestShapeValueStopsAtAClosingTag(t *testing.T) {
	r := New()
	for in, want := range map[string]string{
		"<td>token: abc.def</td>":              "<td>token: " + Mask + "</td>",
		"<pre>token: &lt;redacted&gt;</pre>":   "<pre>token: " + Mask + "</pre>",
		"<pre>password: " + Mask + "</pre>":    "<pre>password: " + Mask + "</pre>",
		"password: a<b>c":                      "password: " + Mask,
		"Authorization: Bearer abc</x-header>": "Authorization: Bearer " + Mask + "</x-header>",
	} {
		if got := r.String(in); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}
