package placement

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tkg-e2e/harness/framework/artifacts"

	"github.com/tkg-e2e/harness/framework/assert"
	"github.com/tkg-e2e/harness/framework/assert/asserttest"
)

func failingReport(t *testing.T, m *Matrix) *Report {
	t.Helper()
	snap := healthyWorkload()
	snap.Pods[3] = deployPod("tkg-system", "kapp-controller", "64c8bdfc86", "lcq2p", "md-0", crashLooping(2))
	snap.Pods = append(snap.Pods, deployPod("capi-system", "capi-controller-manager", "8778fdfcb", "srm6n", "md-0"))
	r, err := Evaluate(m, assert.Workload, "wl-1", snap)
	if err != nil {
		t.Fatal(err)
	}
	// As Check would attach them after the deadline.
	for i := range r.Results {
		if r.Results[i].Verdict == assert.NotReady {
			r.Results[i].Pods[0].Logs = []ContainerLog{{Container: "manager", Previous: true, Lines: "starting\npanic: <boom> | x\n"}}
		}
	}
	return r
}

func TestMarkdownShowsWholeMatrixAndDeviations(t *testing.T) {
	m := mustParse(t, evalMatrix)
	md := Markdown(m, failingReport(t, m))
	t.Log("\n" + md)
	asserttest.Says(t, "markdown", md,
		"| Component | Namespace | Matched by | management | workload (wl-1) |",
		// every row is rendered, evaluated or not
		"| kube-apiserver | kube-system | static pod kube-apiserver-{node} | – controlPlaneOnly | ✓ controlPlaneOnly |",
		"| capi-controller-manager | capi-system | Deployment capi-controller-manager | – must | ! unexpected |",
		"| kapp-controller | kapp-controller, tkg-system | Deployment kapp-controller | – must | ✗ not ready |",
		"| cert-manager | cert-manager | Deployment cert-manager | – must | ✓ mustNot |",
		"**FAILED**", "2/7 components deviate",
		"#### ! capi-controller-manager: unexpected",
		"must not run on a workload cluster; runs on node md-0 (worker)",
		"#### ✗ kapp-controller: not ready",
		"restart(s), reason CrashLoopBackOff",
		"last log lines of container manager (previous run)",
		"    panic: <boom> | x",
		"Legend: ✓ ok · ✗ missing / not ready · ! unexpected · – not evaluated",
	)
}

func TestMarkdownRowsTimesRolesWithoutReports(t *testing.T) {
	m := mustParse(t, evalMatrix)
	md := Markdown(m)
	if n := strings.Count(md, "| – "); n != 2*len(m.Components) {
		t.Errorf("want every cell not evaluated (%d), got %d:\n%s", 2*len(m.Components), n, md)
	}
}

func TestMarkdownTwoClustersOfOneRole(t *testing.T) {
	m := mustParse(t, evalMatrix)
	a, _ := Evaluate(m, assert.Workload, "wl-a", healthyWorkload())
	b, _ := Evaluate(m, assert.Workload, "wl-b", healthyWorkload())
	md := Markdown(m, a, b)
	if !strings.Contains(md, "| management | workload (wl-a) | workload (wl-b) |") {
		t.Errorf("want one column per evaluated cluster:\n%s", md)
	}
	if strings.Contains(md, "Deviations") {
		t.Errorf("healthy reports have no deviations section")
	}
}

func TestHTMLIsSelfContainedAndEscaped(t *testing.T) {
	m := mustParse(t, evalMatrix)
	r := failingReport(t, m)
	page, err := HTML(m, r)
	if err != nil {
		t.Fatal(err)
	}
	asserttest.Says(t, "html", page, "<!DOCTYPE html>", "<style>", `<td class="unexpected"`, `<td class="bad"`,
		"workload (wl-1)", "panic: &lt;boom&gt; | x", "FAILED")
	asserttest.SaysNot(t, "self-contained, escaped html", page, "<script", "http://", "https://", "<link", "panic: <boom>")
	// Through the artifacts Writer, as Run writes it: a page without
	// secrets is written as rendered.
	w, err := artifacts.New(artifacts.Options{Root: t.TempDir(), MaxFileSize: artifacts.DefaultMaxFileSize})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile("placement.html", []byte(page)); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(w.Root(), "placement.html")); err != nil || string(b) != page {
		t.Errorf("file differs from HTML(): %v", err)
	}
}
