package cluster_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tkg-e2e/harness/framework/artifacts"
	"github.com/tkg-e2e/harness/framework/artifacts/artifactstest"
	"github.com/tkg-e2e/harness/framework/artifacts/cluster"
	"github.com/tkg-e2e/harness/framework/artifacts/leakcheck"
	"github.com/tkg-e2e/harness/framework/artifacts/report"
)

// The tests below run against a real cluster when HARNESS_TEST_KUBECONFIG
// points at one (a kind cluster: `kind create cluster --name art-test`).
//   HARNESS_TEST_CLUSTER_NAME  cluster name; default: the current context without "kind-"
//   HARNESS_TEST_DOCKER_NODES  "false" for clusters whose nodes are not local containers
//   HARNESS_TEST_POD_IMAGE     an image with /bin/sh on the nodes, to prove pod logs are redacted
//   HARNESS_TEST_KEEP          a folder to keep the artifacts in, for reading them

type realCluster struct {
	kubeconfig, name string
	docker           bool
	core             kubernetes.Interface
}

func needCluster(tb testing.TB) realCluster {
	tb.Helper()
	kc := os.Getenv("HARNESS_TEST_KUBECONFIG")
	if kc == "" {
		tb.Skip("HARNESS_TEST_KUBECONFIG is not set: no real cluster to collect (create one with `kind create cluster --name art-test` and point the variable at its kubeconfig)")
	}
	raw, err := clientcmd.LoadFromFile(kc)
	if err != nil {
		tb.Fatalf("HARNESS_TEST_KUBECONFIG=%s: %v", kc, err)
	}
	name := os.Getenv("HARNESS_TEST_CLUSTER_NAME")
	if name == "" {
		name = strings.TrimPrefix(raw.CurrentContext, "kind-")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		tb.Fatal(err)
	}
	core, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return realCluster{kubeconfig: kc, name: name, docker: os.Getenv("HARNESS_TEST_DOCKER_NODES") != "false", core: core}
}

func randomHex(tb testing.TB, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		tb.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func artifactsRoot(tb testing.TB) string {
	if keep := os.Getenv("HARNESS_TEST_KEEP"); keep != "" {
		p := filepath.Join(keep, tb.Name())
		_ = os.RemoveAll(p)
		return p
	}
	return tb.TempDir()
}

func TestCollectRealCluster(t *testing.T) {
	rc := needCluster(t)
	ctx := context.Background()
	secretValue := "in-cluster-" + randomHex(t, 12)
	vcPassword := "vc-" + randomHex(t, 10) + "&<x>"
	ns := "art-test-" + randomHex(t, 3)

	_, err := rc.core.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	must(t, err)
	t.Cleanup(func() { _ = rc.core.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	// kubectl apply would also leave the whole Secret in this annotation.
	lastApplied, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "art-secret", "namespace": ns}, "stringData": map[string]string{"password": secretValue}})
	_, err = rc.core.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "art-secret", Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": string(lastApplied)}},
		StringData: map[string]string{"password": secretValue, "vcenter": vcPassword},
	}, metav1.CreateOptions{})
	must(t, err)

	if img := os.Getenv("HARNESS_TEST_POD_IMAGE"); img != "" {
		// A pod that prints both secrets into its log, as a careless controller would.
		_, err = rc.core.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "leaky"},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{
				Name: "leaky", Image: img, ImagePullPolicy: corev1.PullIfNotPresent,
				Command: []string{"/bin/sh", "-c", `echo "password from env: $PW"; echo "vcenter: $VC"; echo done`},
				Env: []corev1.EnvVar{
					{Name: "PW", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "art-secret"}, Key: "password"}}},
					{Name: "VC", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "art-secret"}, Key: "vcenter"}}},
				},
			}}},
		}, metav1.CreateOptions{})
		must(t, err)
		deadline := time.Now().Add(60 * time.Second)
		for {
			p, err := rc.core.CoreV1().Pods(ns).Get(ctx, "leaky", metav1.GetOptions{})
			must(t, err)
			if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("pod leaky did not finish: phase %s", p.Status.Phase)
			}
			time.Sleep(time.Second)
		}
	} else {
		t.Log("HARNESS_TEST_POD_IMAGE not set: pod-log redaction is not exercised against the cluster (it is in the Writer's unit tests)")
	}

	w, err := artifacts.New(artifacts.Options{Root: artifactsRoot(t), MaxFileSize: artifacts.DefaultMaxFileSize, Secrets: []string{vcPassword}})
	must(t, err)
	// Stdout is captured to prove nothing the collector prints carries a secret.
	stdout := filepath.Join(t.TempDir(), "stdout")
	term, err := os.Create(stdout)
	must(t, err)
	orig := os.Stdout
	os.Stdout = term
	start := time.Now()
	got, err := cluster.Collect(ctx, w, cluster.Input{Name: rc.name, Role: "bootstrap", KubeconfigPath: rc.kubeconfig, DockerNodes: rc.docker, ItemTimeout: 30 * time.Second})
	took := time.Since(start)
	os.Stdout = orig
	must(t, term.Close())
	must(t, err)
	if _, err := report.Write(w, report.Input{RunID: "real-cluster-test", Clusters: []artifacts.ClusterFindings{got},
		Failure: &report.Failure{Stage: "test", Message: "not a failure: the test writes the reports to check them"}}); err != nil {
		t.Fatal(err)
	}
	files, size := folderSize(t, w.Root())
	t.Logf("collected cluster %s in %s: %d files, %s (artifacts in %s)", rc.name, took.Round(time.Millisecond), files, artifacts.HumanBytes(size), w.Root())

	if got.APIError != "" || got.DockerError != "" {
		t.Fatalf("findings: %+v", got)
	}
	for _, it := range w.Items() {
		if it.Outcome != artifacts.OutcomeSkipped {
			t.Errorf("item failed: %+v", it)
		}
	}
	dump := artifactstest.Read(t, w, filepath.Join(got.Folder, "resources/core/secrets.yaml"))
	if !strings.Contains(dump, "name: art-secret") || !strings.Contains(dump, "namespace: "+ns) || !strings.Contains(dump, "password: <redacted>") {
		t.Errorf("the Secret is not in the dump, or not as expected")
	}
	for _, want := range []string{"events.txt", "api-resources.txt", "controllers.txt", "resources/core/pods.yaml", "resources/core/nodes.yaml",
		"pods/kube-system", "findings.json"} {
		if _, err := os.Stat(filepath.Join(w.Root(), got.Folder, want)); err != nil {
			t.Errorf("missing %s: %v", want, err)
		}
	}
	if rc.docker {
		node := rc.name + "-control-plane"
		for _, f := range []string{"kubelet.log", "containerd.log", "journal.log", "crictl-ps.txt", "container-inspect-and-logs.txt"} {
			if b, err := os.ReadFile(filepath.Join(w.Root(), got.Folder, "nodes", node, f)); err != nil || len(b) == 0 {
				t.Errorf("node file %s empty or missing: %v", f, err)
			}
		}
	}
	if !rc.docker {
		// No SSH key was given: the absence of node logs must be explained, not silent.
		if note := artifactstest.Read(t, w, filepath.Join(got.Folder, "nodes", "NOT-COLLECTED.txt")); !strings.Contains(note, cluster.NotConfigured) {
			t.Errorf("NOT-COLLECTED.txt: %q", note)
		}
		if errs := artifactstest.Read(t, w, artifacts.ErrorsFile); !strings.Contains(errs, "[not collected] cluster bootstrap/"+rc.name+": node logs over SSH: "+cluster.NotConfigured) {
			t.Errorf("errors.txt does not explain the missing node logs:\n%s", errs)
		}
	}
	if os.Getenv("HARNESS_TEST_POD_IMAGE") != "" {
		log := artifactstest.Read(t, w, filepath.Join(got.Folder, "pods", ns, "leaky", "leaky.log"))
		if !strings.Contains(log, "done") || !strings.Contains(log, "vcenter: <redacted>") {
			t.Errorf("pod log not collected or not redacted as expected:\n%s", log)
		}
	}

	secrets := []string{secretValue, vcPassword}
	leaks, err := leakcheck.Dir(w.Root(), secrets...)
	must(t, err)
	for _, l := range leaks {
		t.Errorf("leak in artifacts: %s", l)
	}
	out, err := os.ReadFile(stdout)
	must(t, err)
	for _, l := range leakcheck.Text("stdout", string(out), secrets...) {
		t.Errorf("leak on stdout: %s", l)
	}
}

// BenchmarkCollectCluster measures one collection of a real cluster, the
// number to keep under 15 s for the management cluster.
func BenchmarkCollectCluster(b *testing.B) {
	rc := needCluster(b)
	var bytes, files int64
	for b.Loop() {
		w, err := artifacts.New(artifacts.Options{Root: b.TempDir(), MaxFileSize: artifacts.DefaultMaxFileSize})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := cluster.Collect(context.Background(), w, cluster.Input{Name: rc.name, Role: "bench", KubeconfigPath: rc.kubeconfig,
			DockerNodes: rc.docker, ItemTimeout: 30 * time.Second}); err != nil {
			b.Fatal(err)
		}
		n, s := folderSize(b, w.Root())
		files, bytes = int64(n), s
	}
	b.ReportMetric(float64(bytes), "bytes/collection")
	b.ReportMetric(float64(files), "files/collection")
}

func folderSize(tb testing.TB, root string) (int, int64) {
	n, size := 0, int64(0)
	err := filepath.WalkDir(root, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		n++
		size += info.Size()
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return n, size
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
