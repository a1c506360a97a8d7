package redact_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/tkg-e2e/harness/framework/artifacts/leakcheck"
	"github.com/tkg-e2e/harness/framework/redact"
)

// password holds every character that escaping changes somewhere: & (HTML,
// URL), ' (YAML single quotes), " and \ (JSON, YAML double quotes), % (URL).
const password = `Tr0ub&a'd"or%3\x9`

func jsonString(t *testing.T, v string) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func yamlDoubleQuoted(t *testing.T, v string) string {
	t.Helper()
	n := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Value: "value"},
		{Kind: yaml.ScalarNode, Value: v, Style: yaml.DoubleQuotedStyle},
	}}
	b, err := yaml.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// blob is a base64 kubeconfig-like document holding v after prefix bytes,
// so that v starts at offset len(prefix) mod 3 of the encoding.
func blob(v string, align int) string {
	doc := "apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n    username: admin\n    secret-value: "
	for len(doc)%3 != align {
		doc += " "
	}
	return "userdata: " + base64.StdEncoding.EncodeToString([]byte(doc+v+"\n    other: x\n")) + "\n"
}

func writeThroughLineWriter(r *redact.Redactor, text string) string {
	var out bytes.Buffer
	w := r.Writer(&out)
	for i := 0; i < len(text); i += 4096 {
		w.Write([]byte(text[i:min(i+4096, len(text))]))
	}
	w.Flush()
	return out.String()
}

// TestEveryRenderingIsMaskedAndEveryUnmaskedRenderingIsFound checks each
// rendering twice: the redactor masks it, and the leak scan, which does not
// use the redactor's list of forms, finds it when it is left unmasked.
func TestEveryRenderingIsMaskedAndEveryUnmaskedRenderingIsFound(t *testing.T) {
	const short = "7#q"
	// A secret whose first character sits in the last bytes before the
	// 64 KiB flush of a line that never ends.
	split := strings.Repeat("x", 64<<10-5) + " " + password + " tail\n"
	cases := []struct {
		name, secret, text string
		stream             bool // through the streaming writer
	}{
		{name: "raw", text: "login " + password + " ok\n"},
		{name: "JSON-escaped", text: `{"value":` + jsonString(t, password) + "}\n"},
		{name: "doubly JSON-escaped", text: `{"annotation":` + jsonString(t, `{"value":`+jsonString(t, password)+`}`) + "}\n"},
		{name: "URL query-escaped", text: "GET https://vc.example.com/sdk?user=admin&pw=" + url.QueryEscape(password) + "&x=1\n"},
		{name: "URL path-escaped", text: "GET https://vc.example.com/login/" + url.PathEscape(password) + "/next\n"},
		{name: "YAML single-quoted", text: "value: '" + strings.ReplaceAll(password, "'", "''") + "'\n"},
		{name: "YAML double-quoted", text: yamlDoubleQuoted(t, password)},
		{name: "base64 alignment 0", text: blob(password, 0)},
		{name: "base64 alignment 1", text: blob(password, 1)},
		{name: "base64 alignment 2", text: blob(password, 2)},
		{name: "split at the 64 KiB flush", text: split, stream: true},
		{name: "3-character secret", secret: short, text: "pin " + short + " given\n"},
		{name: "3-character secret in base64 alignment 0", secret: short, text: blob(short, 0)},
		{name: "3-character secret in base64 alignment 1", secret: short, text: blob(short, 1)},
		{name: "3-character secret in base64 alignment 2", secret: short, text: blob(short, 2)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			secret := c.secret
			if secret == "" {
				secret = password
			}
			if found := leakcheck.Text("unmasked", c.text, secret); len(found) == 0 {
				t.Errorf("the scan does not find the unmasked rendering in %.200q", c.text)
			}
			r := redact.New(secret)
			var out string
			if c.stream {
				out = writeThroughLineWriter(r, c.text)
			} else {
				out = r.String(c.text)
			}
			if !strings.Contains(out, redact.Mask) {
				t.Errorf("no mask in %.300q", out)
			}
			if found := leakcheck.Text("masked", out, secret); len(found) != 0 {
				t.Errorf("the secret survived masking: %v in %.300q", found, out)
			}
			if c.stream && len(out) < 64<<10 {
				t.Errorf("the streaming writer lost output: %d bytes", len(out))
			}
		})
	}
}
