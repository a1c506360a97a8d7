// Package asserttest holds what the tests of the engine's checks share, so
// that placement and packages prove themselves the same way: the connection
// to the real cluster of scripts/test-assertions-real.sh (the tests skip
// without it), a progress writer into the test log, and the check that a
// report says everything it must. Like net/http/httptest it is for tests
// only; it reports through testing.TB and never panics or exits.
package asserttest

import (
	"os"
	"strings"
	"testing"

	"github.com/tkg-e2e/harness/framework/kube"
)

// KubeconfigEnv names the kubeconfig of the real test cluster.
const KubeconfigEnv = "HARNESS_TEST_KUBECONFIG"

// Connect connects to the real test cluster, or skips the test when
// KubeconfigEnv is unset; image is the image the test needs loaded there.
func Connect(t testing.TB, image string) *kube.Cluster {
	t.Helper()
	path := os.Getenv(KubeconfigEnv)
	if path == "" {
		t.Skip(KubeconfigEnv + " is not set: real-cluster tests need a kind cluster with kapp-controller and " +
			image + " loaded (scripts/test-assertions-real.sh creates one)")
	}
	k, err := kube.Connect(path)
	if err != nil {
		t.Fatalf("%s=%s: %v", KubeconfigEnv, path, err)
	}
	return k
}

// Log writes progress lines into the test log.
type Log struct{ T testing.TB }

func (l Log) Write(p []byte) (int, error) {
	l.T.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// Says fails the test for every wanted string the text lacks, naming what
// the text is ("markdown", "failure message"); a report that leaves out one
// fact is as wrong as one that leaves out all.
func Says(t testing.TB, what, text string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, text)
		}
	}
}

// SaysNot fails the test for every unwanted string the text contains.
func SaysNot(t testing.TB, what, text string, unwanted ...string) {
	t.Helper()
	for _, u := range unwanted {
		if strings.Contains(text, u) {
			t.Errorf("%s contains %q:\n%s", what, u, text)
		}
	}
}
