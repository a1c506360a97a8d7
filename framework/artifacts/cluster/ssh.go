package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// SSH says how to reach machines that are not containers (vSphere VMs).
type SSH struct {
	// KeyFile is the private key for User (config vsphere.nodeSSH.keyFile,
	// the private half of VSPHERE_SSH_AUTHORIZED_KEY). Empty means SSH is
	// not configured: node logs are then recorded as not collected, with
	// NotConfigured as the reason, in errors.txt and in nodes/NOT-COLLECTED.txt.
	KeyFile string
	// User defaults to capv, the user Cluster API Provider vSphere creates.
	User string
	// Port defaults to 22.
	Port int
	// Hosts maps a node (or Machine) name to the address to dial, host or
	// host:port. Nodes not in it are dialled at their InternalIP, then
	// ExternalIP; with the API down, the names in Hosts are the nodes.
	Hosts map[string]string
}

// NotConfigured is the line the artifacts hold when a cluster's nodes are
// VMs and no SSH key was given.
const NotConfigured = "node logs not collected: set vsphere.nodeSSH (user, keyFile) to collect them over SSH"

func (s SSH) configured() bool { return s.KeyFile != "" }

// sshExec runs node commands over SSH with the Go client: one connection
// per node, one session per command. It implements NodeRunner. Sessions of
// a node run at once up to the collection's parallelism (8 by default),
// under OpenSSH's MaxSessions of 10.
type sshExec struct {
	cfg    SSH
	signer ssh.Signer

	mu      sync.Mutex
	addrs   map[string]string
	clients map[string]*ssh.Client
}

func newSSHExec(cfg SSH) (*sshExec, error) {
	if cfg.User == "" {
		cfg.User = "capv"
	}
	if cfg.Port == 0 {
		cfg.Port = 22
	}
	b, err := os.ReadFile(cfg.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("SSH key: %w", err)
	}
	signer, err := ssh.ParsePrivateKey(b)
	if err != nil {
		return nil, fmt.Errorf("SSH key %s: %w (give an unencrypted private key: the collection cannot prompt)", cfg.KeyFile, err)
	}
	return &sshExec{cfg: cfg, signer: signer, addrs: map[string]string{}, clients: map[string]*ssh.Client{}}, nil
}

// dialAddr is host:port for an address that may or may not carry a port.
func (s *sshExec) dialAddr(addr string) string {
	if _, _, err := net.SplitHostPort(addr); err == nil {
		return addr
	}
	return net.JoinHostPort(addr, strconv.Itoa(s.cfg.Port))
}

// HostKey is what a node presented when it was connected to.
type HostKey struct {
	Addr        string
	Type        string
	Fingerprint string
}

// Connect dials a node and keeps the connection for Run. The host key is
// accepted whatever it is and returned, so the caller records its
// fingerprint: there is no known_hosts for these VMs, which are the run's
// own and were cloned from the run's template minutes ago; the recorded
// fingerprint lets a reader compare it with the VM console if in doubt.
func (s *sshExec) Connect(ctx context.Context, nodeName, addr string) (HostKey, error) {
	target := s.dialAddr(addr)
	hk := HostKey{Addr: target}
	cfg := &ssh.ClientConfig{
		User: s.cfg.User,
		Auth: []ssh.AuthMethod{ssh.PublicKeys(s.signer)},
		HostKeyCallback: func(_ string, _ net.Addr, key ssh.PublicKey) error {
			hk.Type, hk.Fingerprint = key.Type(), ssh.FingerprintSHA256(key)
			return nil
		},
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", target)
	if err != nil {
		return hk, fmt.Errorf("ssh %s@%s: %w", s.cfg.User, target, err)
	}
	// The handshake has no context of its own: closing the connection is how
	// it is stopped at the item timeout.
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	c, chans, reqs, err := ssh.NewClientConn(conn, target, cfg)
	if !stop() {
		if err == nil {
			_ = c.Close()
		}
		return hk, fmt.Errorf("ssh %s@%s: handshake: %w", s.cfg.User, target, context.Cause(ctx))
	}
	if err != nil {
		_ = conn.Close()
		if strings.Contains(err.Error(), "unable to authenticate") {
			return hk, fmt.Errorf("ssh %s@%s: the node refused the key %s (%s) for user %s: is it the private half of vsphere.sshAuthorizedKey, and the user CAPV's (capv)? (%w)",
				s.cfg.User, target, s.cfg.KeyFile, ssh.FingerprintSHA256(s.signer.PublicKey()), s.cfg.User, err)
		}
		return hk, fmt.Errorf("ssh %s@%s: %w", s.cfg.User, target, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.clients[nodeName]; old != nil {
		_ = old.Close()
	}
	s.clients[nodeName] = ssh.NewClient(c, chans, reqs)
	s.addrs[nodeName] = target
	return hk, nil
}

// Run runs cmd with sudo (journald and crictl need root; CAPV's user has
// passwordless sudo) on a node Connect reached, streaming stdout to out.
func (s *sshExec) Run(ctx context.Context, nodeName string, out io.Writer, cmd ...string) error {
	s.mu.Lock()
	cl, addr := s.clients[nodeName], s.addrs[nodeName]
	s.mu.Unlock()
	if cl == nil {
		return fmt.Errorf("node %s: not connected over SSH", nodeName)
	}
	where := fmt.Sprintf("ssh %s@%s %s", s.cfg.User, addr, strings.Join(cmd, " "))
	sess, err := cl.NewSession()
	if err != nil {
		return fmt.Errorf("%s: new session: %w", where, err)
	}
	defer sess.Close()
	stderr := tailBuffer{max: 4 << 10}
	sess.Stdout, sess.Stderr = out, &stderr
	if err := sess.Start("sudo -n " + shellQuote(cmd)); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	done := make(chan error, 1)
	go func() { done <- sess.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		// Not every sshd honours signals; closing the channel ends the
		// session either way, and Wait returns once the output is drained.
		_ = sess.Signal(ssh.SIGKILL)
		_ = sess.Close()
		select {
		case <-done:
		case <-time.After(500 * time.Millisecond):
		}
		return fmt.Errorf("%s: stopped: %w", where, context.Cause(ctx))
	}
	if err != nil {
		var ee *ssh.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("%s: exit status %d (stderr: %s)", where, ee.ExitStatus(), stderr.lines(3))
		}
		return fmt.Errorf("%s: %w (stderr: %s)", where, err, stderr.lines(3))
	}
	return nil
}

// Close ends every connection.
func (s *sshExec) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for n, c := range s.clients {
		_ = c.Close()
		delete(s.clients, n)
	}
}

func shellQuote(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
