package config

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

func writeSSHKey(t *testing.T, dir, name string, mode os.FileMode, passphrase string) string {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	blk, err := ssh.MarshalPrivateKey(priv, "test")
	if passphrase != "" {
		blk, err = ssh.MarshalPrivateKeyWithPassphrase(priv, "test", []byte(passphrase))
	}
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, pem.EncodeToMemory(blk), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil { // whatever the umask
		t.Fatal(err)
	}
	return p
}

func nodeSSHProfile(t *testing.T, block string) string {
	return fixture(t, replace("  simulator: true\n", "  simulator: true\n  nodeSSH:\n"+block))
}

func TestNodeSSHValidKeyResolvedAgainstTheConfig(t *testing.T) {
	p := nodeSSHProfile(t, "    user: capv\n    keyFile: keys/id_ed25519\n")
	if err := os.Mkdir(filepath.Join(filepath.Dir(p), "keys"), 0o700); err != nil {
		t.Fatal(err)
	}
	key := writeSSHKey(t, filepath.Join(filepath.Dir(p), "keys"), "id_ed25519", 0o600, "")
	cfg, ps := load(t, p, nil)
	if ps != nil {
		t.Fatal(ps.Error())
	}
	if cfg.VSphere.NodeSSH.KeyFile != key || cfg.VSphere.NodeSSH.User != "capv" {
		t.Errorf("nodeSSH = %+v, want keyFile %s", cfg.VSphere.NodeSSH, key)
	}
	// 0400 is stricter than 0600: accepted.
	if err := os.Chmod(key, 0o400); err != nil {
		t.Fatal(err)
	}
	if _, ps := load(t, p, nil); ps != nil {
		t.Fatal(ps.Error())
	}
}

func TestNodeSSHProblemsReportedTogetherWithLines(t *testing.T) {
	dir := t.TempDir()
	open := writeSSHKey(t, dir, "id_open", 0o644, "")
	p := nodeSSHProfile(t, "    keyFile: "+open+"\n")
	_, ps := load(t, p, nil)
	at := fmt.Sprintf("profile.yaml:%d", lineOf(t, p, "keyFile:"))
	// A key readable by others and no user: both at once, with file:line.
	expectProblem(t, ps, at, "vsphere.nodeSSH.keyFile", "mode 0644", "other users", "fix: chmod 600 "+open)
	expectProblem(t, ps, at, "vsphere.nodeSSH.user", "keyFile is set but user is empty", "capv")
	if strings.Contains(ps.Error(), "PRIVATE KEY") {
		t.Fatalf("the report quotes the key:\n%s", ps.Error())
	}

	pub := filepath.Join(dir, "id.pub")
	if err := os.WriteFile(pub, []byte("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGx0 user@host\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	locked := writeSSHKey(t, dir, "id_locked", 0o600, "correct horse")
	garbage := filepath.Join(dir, "garbage")
	if err := os.WriteFile(garbage, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{
		pub:                      "looks like a public key",
		locked:                   "protected by a passphrase",
		garbage:                  "is not a private key SSH can use",
		filepath.Join(dir, "no"): "cannot read the SSH key",
		dir:                      "is a directory",
	} {
		p := nodeSSHProfile(t, "    user: capv\n    keyFile: "+file+"\n")
		_, ps := load(t, p, nil)
		expectProblem(t, ps, fmt.Sprintf("profile.yaml:%d", lineOf(t, p, "keyFile:")), "vsphere.nodeSSH.keyFile", want)
	}

	p = nodeSSHProfile(t, "    user: capv\n")
	_, ps = load(t, p, nil)
	expectProblem(t, ps, fmt.Sprintf("profile.yaml:%d", lineOf(t, p, "user: capv")), "vsphere.nodeSSH.keyFile", "user is set but keyFile is empty")
}
