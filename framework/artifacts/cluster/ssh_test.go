package cluster_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/tkg-e2e/harness/framework/artifacts"
	"github.com/tkg-e2e/harness/framework/artifacts/artifactstest"
	"github.com/tkg-e2e/harness/framework/artifacts/cluster"
	"github.com/tkg-e2e/harness/framework/artifacts/leakcheck"
)

const nodeSecret = "Vc-Passw0rd-9f3kQ2"

// collectVM collects a vSphere-like cluster whose API is down, so the node
// side is all there is: node logs over SSH to the given hosts.
func collectVM(t *testing.T, in cluster.Input) (*artifacts.Writer, string) {
	t.Helper()
	w := artifactstest.NewWriter(t, artifacts.DefaultMaxFileSize, nodeSecret)
	in.Name, in.Role, in.KubeconfigPath = "vm", "workload", deadKubeconfig(t)
	if in.ItemTimeout == 0 {
		in.ItemTimeout = 3 * time.Second
	}
	start := time.Now()
	if _, err := cluster.Collect(context.Background(), w, in); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("collection took %s", took)
	}
	if err := w.WriteIndex(); err != nil {
		t.Fatal(err)
	}
	return w, artifactstest.Read(t, w, artifacts.ErrorsFile)
}

func TestSSHCollectsTheDockerPathsNodeLogs(t *testing.T) {
	keyFile, pub := newKey(t)
	n := startSSHNode(t, pub, nodeSecret)
	w, errs := collectVM(t, cluster.Input{SSH: cluster.SSH{KeyFile: keyFile, Hosts: map[string]string{"node-a": n.addr}}})

	dir := "clusters/workload-vm/nodes/node-a/"
	for file, want := range map[string]string{
		"kubelet.log":           "Started kubelet; vcenter password=",
		"journal.log":           "-- journal: --no-pager --output=short-precise",
		"crictl-ps.txt":         "kube-apiserver-node-a",
		"kubelet-version.txt":   "Kubernetes v1.33.1",
		"cloud-init-output.log": "Cloud-init v. 24.1 finished",
		// The API is down: the pod logs kept on the node are taken, as on the Docker path.
		"var-log-pods/kube-system_etcd-node-a_1/etcd/0.log": "etcd: serving on 2379",
		"ssh-host-key.txt": ssh.FingerprintSHA256(n.hostKey),
	} {
		if got := artifactstest.Read(t, w, dir+file); !strings.Contains(got, want) {
			t.Errorf("%s = %q, want it to contain %q", file, got, want)
		}
	}
	if hk := artifactstest.Read(t, w, dir+"ssh-host-key.txt"); !strings.Contains(hk, "accepted without verification") || !strings.Contains(hk, "ssh-ed25519") {
		t.Errorf("host key record: %q", hk)
	}
	// The node's secret is masked like any other.
	if got := artifactstest.Read(t, w, dir+"kubelet.log"); strings.Contains(got, nodeSecret) {
		t.Errorf("secret in kubelet.log: %q", got)
	}
	leaks, err := leakcheck.Dir(w.Root(), nodeSecret)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range leaks {
		t.Errorf("leak: %s", l)
	}
	// The hanging journalctl is cut at the item timeout and says so.
	want := "[timed out] cluster workload/vm: node node-a containerd.log: no result within the item timeout of 3s"
	if !strings.Contains(errs, want) {
		t.Errorf("errors.txt lacks %q:\n%s", want, errs)
	}
	// The API items fail (it is dead); nothing else of the node may.
	for _, line := range strings.Split(errs, "\n") {
		if strings.Contains(line, "node node-a") && !strings.Contains(line, "containerd.log") {
			t.Errorf("unexpected node failure: %s", line)
		}
	}
	// Commands run under sudo, quoted.
	if ran := n.ran(); !strings.Contains(ran, "sudo -n 'journalctl' '--no-pager' '--output=short-precise' '-u' 'kubelet.service'") {
		t.Errorf("commands run on the node:\n%s", ran)
	}
	idx := artifactstest.Read(t, w, artifacts.IndexJSON)
	if !strings.Contains(idx, dir+"crictl-ps.txt") || !strings.Contains(idx, "node node-a ssh connect") {
		t.Errorf("index.json does not list the node's files and items")
	}
}

func TestSSHWithAWrongKeyIsAClearFailure(t *testing.T) {
	_, authorized := newKey(t)
	wrongKey, _ := newKey(t)
	n := startSSHNode(t, authorized, nodeSecret)
	w, errs := collectVM(t, cluster.Input{SSH: cluster.SSH{KeyFile: wrongKey, Hosts: map[string]string{"node-a": n.addr}}})

	for _, want := range []string{
		"[failed] cluster workload/vm: node node-a ssh connect: ssh capv@" + n.addr + ": the node refused the key " + wrongKey,
		"is it the private half of vsphere.sshAuthorizedKey",
		"[not collected] cluster workload/vm: node node-a logs: the SSH connection failed",
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("errors.txt lacks %q:\n%s", want, errs)
		}
	}
	// The host key was seen before authentication failed: it is recorded.
	if hk := artifactstest.Read(t, w, "clusters/workload-vm/nodes/node-a/ssh-host-key.txt"); !strings.Contains(hk, ssh.FingerprintSHA256(n.hostKey)) {
		t.Errorf("host key record: %q", hk)
	}
	if _, err := os.Stat(filepath.Join(w.Root(), "clusters/workload-vm/nodes/node-a/kubelet.log")); err == nil {
		t.Error("kubelet.log written although the connection failed")
	}
}

func TestSSHUnreachableAndBadKeyAreRecorded(t *testing.T) {
	keyFile, _ := newKey(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	_ = l.Close()
	_, errs := collectVM(t, cluster.Input{SSH: cluster.SSH{KeyFile: keyFile, Hosts: map[string]string{"node-a": closed}}})
	if want := "[failed] cluster workload/vm: node node-a ssh connect: ssh capv@" + closed + ": dial tcp " + closed + ": connect: connection refused"; !strings.Contains(errs, want) {
		t.Errorf("errors.txt lacks %q:\n%s", want, errs)
	}

	notAKey := writeTemp(t, "not a key\n")
	_, errs = collectVM(t, cluster.Input{SSH: cluster.SSH{KeyFile: notAKey, Hosts: map[string]string{"node-a": closed}}})
	if want := "[failed] cluster workload/vm: node logs over SSH: SSH key " + notAKey + ": ssh: no key found"; !strings.Contains(errs, want) {
		t.Errorf("errors.txt lacks %q:\n%s", want, errs)
	}
}

func TestSSHNotConfiguredSaysHowToConfigureIt(t *testing.T) {
	w, errs := collectVM(t, cluster.Input{})
	if want := "[not collected] cluster workload/vm: node logs over SSH: " + cluster.NotConfigured; !strings.Contains(errs, want) {
		t.Errorf("errors.txt lacks %q:\n%s", want, errs)
	}
	if note := artifactstest.Read(t, w, "clusters/workload-vm/nodes/NOT-COLLECTED.txt"); !strings.Contains(note, "set vsphere.nodeSSH (user, keyFile)") {
		t.Errorf("NOT-COLLECTED.txt: %q", note)
	}
}

// A Machine whose Node never registered, listed from the management
// cluster, is reached at the Machine's address: its logs are the ones that
// say why it never joined.
func TestSSHReachesAMachineThatNeverJoined(t *testing.T) {
	keyFile, pub := newKey(t)
	n := startSSHNode(t, pub, nodeSecret)
	host, port, _ := net.SplitHostPort(n.addr)
	p, _ := strconv.Atoi(port)

	var asked string
	api := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		asked = r.URL.Path + "?" + r.URL.RawQuery
		if r.URL.Path != "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machines" || r.URL.Query().Get("labelSelector") != "cluster.x-k8s.io/cluster-name=vm" {
			http.NotFound(rw, r)
			return
		}
		rw.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(rw, `{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"MachineList","metadata":{},"items":[
 {"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Machine","metadata":{"name":"vm-md-0-x7k2p","namespace":"default","labels":{"cluster.x-k8s.io/cluster-name":"vm"}},
  "status":{"phase":"Provisioned","addresses":[{"type":"InternalDNS","address":"vm-md-0-x7k2p"},{"type":"InternalIP","address":%q}]}}]}`, host)
	}))
	defer api.Close()
	mgmt := filepath.Join(t.TempDir(), "mgmt.kubeconfig")
	kc := "apiVersion: v1\nkind: Config\nclusters:\n- cluster: {server: \"" + api.URL + "\"}\n  name: m\ncontexts:\n- context: {cluster: m, user: m}\n  name: m\ncurrent-context: m\nusers:\n- name: m\n  user: {token: t}\n"
	if err := os.WriteFile(mgmt, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}

	w, errs := collectVM(t, cluster.Input{Namespace: "default", MachineKubeconfigs: []string{mgmt},
		SSH: cluster.SSH{KeyFile: keyFile, User: "capv", Port: p}})
	dir := "clusters/workload-vm/nodes/vm-md-0-x7k2p/"
	if got := artifactstest.Read(t, w, dir+"cloud-init-output.log"); !strings.Contains(got, "Cloud-init v. 24.1 finished") {
		t.Errorf("cloud-init-output.log = %q (API asked %s)\n%s", got, asked, errs)
	}
	if hk := artifactstest.Read(t, w, dir+"ssh-host-key.txt"); !strings.Contains(hk, "from Machine default/vm-md-0-x7k2p InternalIP") {
		t.Errorf("host key record: %q", hk)
	}
	if strings.Contains(errs, "list Machines") {
		t.Errorf("listing Machines failed:\n%s", errs)
	}
}
