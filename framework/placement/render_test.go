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

// unlistedReport fails only by a crashlooping DaemonSet no row describes,
// next to a healthy unlisted pod, with logs as Check attaches them.
func unlistedReport(t *testing.T, m *Matrix) *Report {
	t.Helper()
	snap := crashyDaemonSet(healthyWorkload())
	snap.Pods = append(snap.Pods, deployPod("kube-system", "extra-addon", "5d8f7c9b6", "x1y2z", "md-0"))
	r, err := Evaluate(m, assert.Workload, "wl-1", snap)
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range r.notReady() {
		res.Pods[0].Logs = []ContainerLog{{Container: "manager", Previous: true, Lines: "crashy: cannot read <config>\n"}}
	}
	return r
}

func TestMarkdownShowsFailingUnlistedWorkload(t *testing.T) {
	m := mustParse(t, evalMatrix)
	md := Markdown(m, unlistedReport(t, m))
	t.Log("\n" + md)
	asserttest.Says(t, "markdown", md,
		"**FAILED**", "1/9 components deviate: kube-system/crashy (DaemonSet, no matrix row) not ready",
		// the matrix rows, then the failing workload as a row of its own
		"| kube-proxy | kube-system | DaemonSet kube-proxy | – must | ✓ must |",
		"| kube-system/crashy (DaemonSet, no matrix row) | kube-system | DaemonSet crashy (no row) | – unlisted | ✗ not ready |",
		"#### ✗ kube-system/crashy (DaemonSet, no matrix row): not ready",
		"- expected `unlisted` in kube-system: 2/2 pod(s) failing readiness; no row describes this workload, so defaults.readiness applies (Ready, at most 3 restarts)",
		"- pod `kube-system/crashy-k2x7q` on node cp-0 (control-plane): phase Running, not ready, 7 restart(s), reason CrashLoopBackOff (container manager last exited: Error, code 3)",
		"  - 7 restarts, budget 3",
		"last log lines of container manager (previous run)", "    crashy: cannot read <config>",
		// the healthy one stays a hint
		`1 pod(s) on the workload cluster "wl-1" that no row describes (not a failure)`,
		"- `kube-system/extra-addon-5d8f7c9b6-x1y2z` on md-0",
	)
	asserttest.SaysNot(t, "markdown", md, "extra-addon (Deployment, no matrix row)", "- `kube-system/crashy-k2x7q` on cp-0")
}

func TestHTMLShowsFailingUnlistedWorkload(t *testing.T) {
	m := mustParse(t, evalMatrix)
	page, err := HTML(m, unlistedReport(t, m))
	if err != nil {
		t.Fatal(err)
	}
	asserttest.Says(t, "html", page,
		"<td>kube-system/crashy (DaemonSet, no matrix row)</td><td>kube-system</td><td>DaemonSet crashy (no row)</td>",
		`<td class="bad" title="2/2 pod(s) failing readiness`,
		"<h3>✗ kube-system/crashy (DaemonSet, no matrix row): not ready</h3>",
		"<li>7 restarts, budget 3</li>", "crashy: cannot read &lt;config&gt;",
		"<code>kube-system/extra-addon-5d8f7c9b6-x1y2z</code> on md-0")
}

// A failing unlisted workload gets one grid row for all clusters: absent
// where it does not run, a healthy one where it does not fail.
func TestGridUnlistedRowAcrossClusters(t *testing.T) {
	m := mustParse(t, evalMatrix)
	bad := unlistedReport(t, m)
	ok, _ := Evaluate(m, assert.Workload, "wl-2", healthyWorkload())
	snap := healthyWorkload()
	snap.Pods = append(snap.Pods, dsPod("kube-system", "crashy", "a1b2c", "md-0"))
	fine, _ := Evaluate(m, assert.Workload, "wl-3", snap)
	md := Markdown(m, bad, ok, fine)
	asserttest.Says(t, "markdown", md,
		"| kube-system/crashy (DaemonSet, no matrix row) | kube-system | DaemonSet crashy (no row) | – unlisted | ✗ not ready | ✓ absent | ✓ unlisted |")
	if n := strings.Count(md, "| kube-system/crashy (DaemonSet, no matrix row) |"); n != 1 {
		t.Errorf("want one grid row for the workload, got %d", n)
	}
}
