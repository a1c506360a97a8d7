package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// lineOf is the 1-based line of the first line of text holding s.
func lineOf(t *testing.T, path, s string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, s) {
			return i + 1
		}
	}
	t.Fatalf("%s does not contain %q", path, s)
	return 0
}

func TestShortVCenterPasswordRejected(t *testing.T) {
	p := fixture(t, replace("  simulator: true\n", "  simulator: true\n  password: ${VSPHERE_PASSWORD}\n"))
	_, ps := load(t, p, map[string]string{"VSPHERE_PASSWORD": "x7Q&'"})
	at := fmt.Sprintf("profile.yaml:%d", lineOf(t, p, "password:"))
	expectProblem(t, ps, at, "vsphere.password", "too short", "5 characters", "at least 8", "fix:")
	if strings.Contains(ps.Error(), "x7Q") {
		t.Fatalf("the report quotes the password:\n%s", ps.Error())
	}
	// Eight is enough.
	if _, ps := load(t, p, map[string]string{"VSPHERE_PASSWORD": "x7Q&'abc"}); ps != nil {
		t.Fatalf("an 8-character password was rejected:\n%s", ps.Error())
	}
}

func TestPasswordFileMustBePrivateAndLongEnough(t *testing.T) {
	pw := filepath.Join(t.TempDir(), "vc-password")
	if err := os.WriteFile(pw, []byte("short\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(pw, 0o644); err != nil { // whatever the umask
		t.Fatal(err)
	}
	p := fixture(t, replace("  simulator: true\n", "  simulator: true\n  passwordFile: "+pw+"\n"))
	_, ps := load(t, p, nil)
	at := fmt.Sprintf("profile.yaml:%d", lineOf(t, p, "passwordFile:"))
	// Both problems at once, each with its fix.
	expectProblem(t, ps, at, "vsphere.passwordFile", "mode 0644", "other users", "fix: chmod 600 "+pw)
	expectProblem(t, ps, at, "vsphere.passwordFile", "too short", "5 characters")
	if strings.Contains(ps.Error(), "short\n") {
		t.Fatalf("the report quotes the password:\n%s", ps.Error())
	}

	for _, mode := range []os.FileMode{0o600, 0o400} {
		if err := os.WriteFile(pw, []byte("long-enough-password\n"), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(pw, mode); err != nil {
			t.Fatal(err)
		}
		if _, ps := load(t, p, nil); ps != nil {
			t.Fatalf("mode %04o rejected:\n%s", mode, ps.Error())
		}
	}
}

func TestLiteralSecretVariablesRejected(t *testing.T) {
	p := fixture(t, replace("  CLUSTER_TOPOLOGY: \"true\"\n",
		"  CLUSTER_TOPOLOGY: \"true\"\n  VSPHERE_PASSWORD: hunter2hunter2\n  github_token: ghp_literalvalue123\n  AZURE_CLIENT_SECRET: ${AZURE_CLIENT_SECRET:-fallback-secret}\n  API_TOKEN: ${API_TOKEN}\n"))
	_, ps := load(t, p, map[string]string{"API_TOKEN": "a-token-from-the-env"})
	for _, name := range []string{"VSPHERE_PASSWORD", "github_token", "AZURE_CLIENT_SECRET"} {
		at := fmt.Sprintf("profile.yaml:%d", lineOf(t, p, name+":"))
		expectProblem(t, ps, at, "variables."+name, "literal secret is not allowed", "export "+name, "environment", "vsphere.passwordFile")
	}
	for _, p := range ps {
		if strings.Contains(p.Key, "API_TOKEN") {
			t.Errorf("a ${VAR} reference was rejected: %s", p)
		}
	}
	for _, s := range []string{"hunter2", "ghp_literal", "fallback-secret"} {
		if strings.Contains(ps.Error(), s) {
			t.Fatalf("the report quotes a secret:\n%s", ps.Error())
		}
	}
}

func TestSecretVariablesAreSecretsAndLongEnough(t *testing.T) {
	p := fixture(t, replace("  CLUSTER_TOPOLOGY: \"true\"\n", "  CLUSTER_TOPOLOGY: \"true\"\n  API_TOKEN: ${API_TOKEN}\n"))
	cfg, ps := load(t, p, map[string]string{"API_TOKEN": "a-token-from-the-env"})
	if ps != nil {
		t.Fatal(ps.Error())
	}
	if got := cfg.Secrets(); len(got) != 1 || got[0] != "a-token-from-the-env" {
		t.Fatalf("Secrets() = %d values, want the token", len(got))
	}
	_, ps = load(t, p, map[string]string{"API_TOKEN": "abc"})
	at := fmt.Sprintf("profile.yaml:%d", lineOf(t, p, "API_TOKEN:"))
	expectProblem(t, ps, at, "variables[API_TOKEN]", "too short", "3 characters")
}
