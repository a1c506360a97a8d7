package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/crypto/ssh"
)

// validateNodeSSH checks vsphere.nodeSSH, with which the artifacts collect
// node logs of vSphere VMs over SSH: a user when a key is given (and a key
// when a user is), and a key file that is readable, private to its owner
// and holds an unencrypted private key, so that a run does not learn at
// its first failure, when the logs are wanted, that they cannot be taken.
// A relative keyFile is relative to the file that sets it; ~/ is the home
// folder. The key is never quoted.
func (c *Config) validateNodeSSH(idx nodeIndex) Problems {
	var probs Problems
	add := func(key, msg, fix string) {
		at := idx.at(key)
		if at.node == nil { // a missing key: point at the nodeSSH block
			at = idx.at("vsphere.nodeSSH")
		}
		probs = append(probs, at.problem(key, msg, fix))
	}
	s := &c.VSphere.NodeSSH
	s.KeyFile = c.nodeSSHKeyPath(idx, s.KeyFile)
	switch {
	case s.KeyFile != "" && strings.TrimSpace(s.User) == "":
		add("vsphere.nodeSSH.user", "keyFile is set but user is empty", "set vsphere.nodeSSH.user: capv (the user CAPV creates on every node)")
	case s.KeyFile == "" && s.User != "":
		add("vsphere.nodeSSH.keyFile", "user is set but keyFile is empty: node logs would not be collected",
			"set vsphere.nodeSSH.keyFile to the private half of vsphere.sshAuthorizedKey (VSPHERE_SSH_AUTHORIZED_KEY)")
	}
	if s.KeyFile == "" {
		return probs
	}
	const key = "vsphere.nodeSSH.keyFile"
	fi, err := os.Stat(s.KeyFile)
	if err != nil {
		add(key, fmt.Sprintf("cannot read the SSH key %s: %v", s.KeyFile, unwrapPathErr(err)), "check the path (relative paths are relative to the config file)")
		return probs
	}
	if fi.IsDir() {
		add(key, fmt.Sprintf("%s is a directory, not a key file", s.KeyFile), "point it at the private key, e.g. ~/.ssh/id_ed25519")
		return probs
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		add(key, fmt.Sprintf("the SSH key %s has mode %04o: other users can read it", s.KeyFile, perm), "chmod 600 "+s.KeyFile)
	}
	b, err := os.ReadFile(s.KeyFile)
	if err != nil {
		add(key, fmt.Sprintf("cannot read the SSH key %s: %v", s.KeyFile, unwrapPathErr(err)), "make it readable by the user who runs the suite")
		return probs
	}
	if _, err := ssh.ParsePrivateKey(b); err != nil {
		var pass *ssh.PassphraseMissingError
		switch {
		case errors.As(err, &pass):
			add(key, fmt.Sprintf("the SSH key %s is protected by a passphrase; the collection cannot prompt for it", s.KeyFile),
				"give a key without a passphrase (a copy: ssh-keygen -p -N '' -f <copy>), kept for the testbed")
		case strings.Contains(string(b), "ssh-") && !strings.Contains(string(b), "PRIVATE KEY"):
			add(key, fmt.Sprintf("%s looks like a public key", s.KeyFile), "give the private half (id_ed25519, not id_ed25519.pub)")
		default:
			add(key, fmt.Sprintf("%s is not a private key SSH can use: %v", s.KeyFile, err), "give an OpenSSH or PEM private key (ssh-keygen -t ed25519)")
		}
	}
	return probs
}

// nodeSSHKeyPath resolves a keyFile as the other paths of the config are,
// and a leading ~/ to the home folder (keys live in ~/.ssh).
func (c *Config) nodeSSHKeyPath(idx nodeIndex, p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	base := filepath.Dir(c.Source)
	if loc, ok := idx["vsphere.nodeSSH.keyFile"]; ok && loc.file != "" {
		base = filepath.Dir(loc.file)
	}
	if abs, err := filepath.Abs(filepath.Join(base, p)); err == nil {
		return abs
	}
	return p
}
