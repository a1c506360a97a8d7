package cluster_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tkg-e2e/harness/framework/artifacts"
	"github.com/tkg-e2e/harness/framework/artifacts/artifactstest"
	"github.com/tkg-e2e/harness/framework/artifacts/cluster"
	"github.com/tkg-e2e/harness/framework/artifacts/leakcheck"
	"github.com/tkg-e2e/harness/framework/artifacts/report"
)

const deadToken = "deadbeef.0123456789abcdef0123"

// deadKubeconfig points at a port that was just closed: the state of a
// cluster whose API server never came up.
func deadKubeconfig(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	p := filepath.Join(t.TempDir(), "kubeconfig")
	kc := `apiVersion: v1
kind: Config
clusters:
- cluster: {server: "https://` + addr + `", insecure-skip-tls-verify: true}
  name: dead
contexts:
- context: {cluster: dead, user: dead}
  name: dead
current-context: dead
users:
- name: dead
  user: {token: ` + deadToken + `}
`
	if err := os.WriteFile(p, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDeadAPIIsRecordedAndDoesNotStall(t *testing.T) {
	w := artifactstest.NewWriter(t, artifacts.DefaultMaxFileSize)
	start := time.Now()
	got, err := cluster.Collect(context.Background(), w, cluster.Input{Name: "art-never-created", Role: "workload",
		KubeconfigPath: deadKubeconfig(t), ItemTimeout: 3 * time.Second,
		ExtraFiles: map[string]string{"clusterctl-init.log": writeTemp(t, "applying provider\nAuthorization: Bearer "+deadToken+"\n")}})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("a dead API stalled collection for %s", took)
	}
	if !strings.Contains(got.APIError, "connection refused") {
		t.Fatalf("APIError = %q", got.APIError)
	}
	if err := w.WriteIndex(); err != nil {
		t.Fatal(err)
	}
	errs := artifactstest.Read(t, w, artifacts.ErrorsFile)
	for _, want := range []string{"[failed] cluster workload/art-never-created: API discovery", "[not collected] cluster workload/art-never-created: resources, events, pod logs",
		"[not collected] cluster workload/art-never-created: node logs over SSH"} {
		if !strings.Contains(errs, want) {
			t.Errorf("errors.txt lacks %q:\n%s", want, errs)
		}
	}
	if log := artifactstest.Read(t, w, "clusters/workload-art-never-created/clusterctl-init.log"); !strings.Contains(log, "applying provider") {
		t.Errorf("extra file not copied: %q", log)
	}

	// The summary built from this says where the problem is.
	res, err := report.Write(w, report.Input{Failure: &report.Failure{Stage: "workload", Message: "timed out waiting for the workload cluster API"},
		Clusters: []artifacts.ClusterFindings{got}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Classification.Rule != "api-unreachable" {
		t.Errorf("classification %s", res.Classification)
	}
	findings, err := leakcheck.Dir(w.Root(), deadToken)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		t.Errorf("leak: %s", f)
	}
}

func TestDockerNodesOfAMissingClusterAreExplained(t *testing.T) {
	w := artifactstest.NewWriter(t, artifacts.DefaultMaxFileSize)
	got, err := cluster.Collect(context.Background(), w, cluster.Input{Name: "art-no-such-cluster", Role: "bootstrap",
		KubeconfigPath: deadKubeconfig(t), DockerNodes: true, ItemTimeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// Without a Docker engine the error says so; with one, that no container carries the label.
	if got.DockerError == "" {
		t.Fatal("no DockerError for a cluster that has no node containers")
	}
	t.Logf("DockerError: %s", got.DockerError)
}

func TestBadInputFailsEarly(t *testing.T) {
	w := artifactstest.NewWriter(t, 1024)
	_, err := cluster.Collect(context.Background(), w, cluster.Input{})
	for _, want := range []string{"Name is empty", "KubeconfigPath is empty", "artifacts.itemTimeout"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
}

func writeTemp(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
