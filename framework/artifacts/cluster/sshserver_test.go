package cluster_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/crypto/ssh"
)

// sshNode is an SSH server in the test process standing in for a vSphere
// node: it accepts one user key and runs each exec request with `sh -c` in
// a temp dir whose bin/ holds fake sudo, journalctl, crictl, kubelet, cat
// and tar. Closing the session kills the command's process group, as sshd
// does when the client goes away.
type sshNode struct {
	addr        string
	hostKey     ssh.PublicKey
	bin         string
	podsDir     string
	mu          sync.Mutex
	commands    []string
	wg          sync.WaitGroup
	authorized  ssh.PublicKey
	listener    net.Listener
	closeOnce   sync.Once
	runningCmds map[*exec.Cmd]bool
}

// newKey writes a fresh ed25519 private key (OpenSSH format, 0600) and
// returns its path and public key.
func newKey(t *testing.T) (string, ssh.PublicKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	blk, err := ssh.MarshalPrivateKey(priv, "test")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "id_ed25519")
	if err := os.WriteFile(p, pem.EncodeToMemory(blk), 0o600); err != nil {
		t.Fatal(err)
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return p, sp
}

// fakeTools are the node's commands. journalctl prints its arguments, and
// for the kubelet a line that quotes a secret; "-u containerd.service"
// hangs, to prove the item timeout.
var fakeTools = map[string]string{
	"sudo": `[ "$1" = -n ] && shift; exec "$@"`,
	"journalctl": `case "$*" in
*containerd.service*) exec sleep 300 ;;
*kubelet.service*) echo "kubelet[812]: Started kubelet; vcenter password=$NODE_SECRET" ;;
*) echo "-- journal: $*" ;;
esac`,
	"crictl":  `echo "CONTAINER  IMAGE  CREATED  STATE  NAME  ATTEMPT  POD ID  POD"; echo "abc123  kube-apiserver  1m  Running  kube-apiserver  0  def456  kube-apiserver-node-a"`,
	"kubelet": `echo "Kubernetes v1.33.1"`,
	"cat":     `[ "$1" = /var/log/cloud-init-output.log ] && { echo "Cloud-init v. 24.1 finished"; exit 0; }; exec /bin/cat "$@"`,
	"tar":     `exec /usr/bin/tar --directory "$PODS_DIR" --create --file - .`,
}

func startSSHNode(t *testing.T, authorized ssh.PublicKey, secret string) *sshNode {
	t.Helper()
	_, hostPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	hostSigner, err := ssh.NewSignerFromKey(hostPriv)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	n := &sshNode{bin: filepath.Join(dir, "bin"), podsDir: filepath.Join(dir, "pods"), authorized: authorized,
		hostKey: hostSigner.PublicKey(), runningCmds: map[*exec.Cmd]bool{}}
	for _, d := range []string{n.bin, filepath.Join(n.podsDir, "kube-system_etcd-node-a_1", "etcd")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(n.podsDir, "kube-system_etcd-node-a_1", "etcd", "0.log"), []byte("etcd: serving on 2379\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, body := range fakeTools {
		if err := os.WriteFile(filepath.Join(n.bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := &ssh.ServerConfig{PublicKeyCallback: func(c ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
		if c.User() == "capv" && string(key.Marshal()) == string(n.authorized.Marshal()) {
			return nil, nil
		}
		return nil, errors.New("key not authorized")
	}}
	cfg.AddHostKey(hostSigner)
	n.listener, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n.addr = n.listener.Addr().String()
	env := []string{"PATH=" + n.bin + ":/usr/bin:/bin", "NODE_SECRET=" + secret, "PODS_DIR=" + n.podsDir}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		for {
			conn, err := n.listener.Accept()
			if err != nil {
				return
			}
			n.wg.Add(1)
			go func() {
				defer n.wg.Done()
				n.serve(conn, cfg, dir, env)
			}()
		}
	}()
	t.Cleanup(n.close)
	return n
}

func (n *sshNode) close() {
	n.closeOnce.Do(func() {
		_ = n.listener.Close()
		n.mu.Lock()
		for c := range n.runningCmds {
			_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		}
		n.mu.Unlock()
	})
	n.wg.Wait()
}

func (n *sshNode) serve(conn net.Conn, cfg *ssh.ServerConfig, dir string, env []string) {
	defer conn.Close()
	sc, chans, reqs, err := ssh.NewServerConn(conn, cfg)
	if err != nil {
		return
	}
	defer sc.Close()
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "only sessions")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			return
		}
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			n.session(ch, creqs, dir, env)
		}()
	}
}

func (n *sshNode) session(ch ssh.Channel, reqs <-chan *ssh.Request, dir string, env []string) {
	defer ch.Close()
	for req := range reqs {
		if req.Type != "exec" || len(req.Payload) < 4 {
			_ = req.Reply(req.Type == "signal", nil) // signals are taken; closing the channel kills
			continue
		}
		command := string(req.Payload[4 : 4+binary.BigEndian.Uint32(req.Payload)])
		_ = req.Reply(true, nil)
		n.mu.Lock()
		n.commands = append(n.commands, command)
		n.mu.Unlock()

		cmd := exec.Command("/bin/sh", "-c", command)
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, ch, ch.Stderr()
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			_, _ = ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{127}))
			return
		}
		n.mu.Lock()
		n.runningCmds[cmd] = true
		n.mu.Unlock()
		done := make(chan struct{})
		go func() {
			// The client closing the session ends reqs: kill the command.
			for range reqs {
			}
			select {
			case <-done:
			default:
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			}
		}()
		err := cmd.Wait()
		close(done)
		n.mu.Lock()
		delete(n.runningCmds, cmd)
		n.mu.Unlock()
		status := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			status = ee.ExitCode()
			if status < 0 { // killed by a signal
				status = 137
			}
		}
		_, _ = ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{uint32(status)}))
		return
	}
}

// ran returns the commands the node was asked to run, joined by newlines.
func (n *sshNode) ran() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return strings.Join(n.commands, "\n")
}
