package report_test

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/tkg-e2e/harness/framework/artifacts"
	"github.com/tkg-e2e/harness/framework/artifacts/artifactstest"
	"github.com/tkg-e2e/harness/framework/artifacts/leakcheck"
	"github.com/tkg-e2e/harness/framework/artifacts/report"
	"github.com/tkg-e2e/harness/framework/run"
)

const password = `Pa55&<word>"vc`

// junitCounts parses junit.xml as a CI system would.
func junitCounts(t *testing.T, s string) (tests, failures int, names []string) {
	t.Helper()
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Cases []struct {
				Name string `xml:"name,attr"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(s), &doc); err != nil {
		t.Fatalf("junit.xml is not valid XML: %v\n%s", err, s)
	}
	for _, su := range doc.Suites {
		for _, c := range su.Cases {
			names = append(names, c.Name)
		}
	}
	return doc.Tests, doc.Failures, names
}

func noLeaks(t *testing.T, w *artifacts.Writer) {
	t.Helper()
	findings, err := leakcheck.Dir(w.Root(), password)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		t.Errorf("leak: %s", f)
	}
}

// The bootstrap could not start: no state, no clusters, no suite, only an
// error. Every report must still exist and say what happened.
func TestNothingRanStillExplainsTheFailure(t *testing.T) {
	w := artifactstest.NewWriter(t, artifacts.DefaultMaxFileSize, password)
	res, err := report.Write(w, report.Input{RunID: "r-1", Failure: &report.Failure{
		Message: "load config: literal password rejected in vsphere.password; use ${VSPHERE_PASSWORD} (got " + password + ")"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != report.VerdictFailed || res.Classification.Category != report.Harness {
		t.Fatalf("result %+v", res)
	}
	sum := artifactstest.Read(t, w, report.SummaryFile)
	for _, want := range []string{"# Harness run r-1: FAILED", "**Failing stage:** none (the run failed before any stage started)",
		"**Classification:** harness", "literal password rejected", "No stage was recorded", "No cluster was collected"} {
		if !strings.Contains(sum, want) {
			t.Errorf("SUMMARY.md lacks %q:\n%s", want, sum)
		}
	}
	tests, failures, names := junitCounts(t, artifactstest.Read(t, w, report.JUnitFile))
	if tests != 1 || failures != 1 || !strings.Contains(names[0], "BeforeSuite") {
		t.Errorf("junit: tests=%d failures=%d names=%v", tests, failures, names)
	}
	page := artifactstest.Read(t, w, report.IndexFile)
	for _, want := range []string{`<span class="verdict FAILED">FAILED</span>`, "literal password rejected", `href="SUMMARY.md"`, `href="junit.xml"`, `href="errors.txt"`, `href="timings.json"`} {
		if !strings.Contains(page, want) {
			t.Errorf("index.html lacks %q", want)
		}
	}
	var tim struct {
		Verdict string            `json:"verdict"`
		Stages  []json.RawMessage `json:"stages"`
	}
	if err := json.Unmarshal([]byte(artifactstest.Read(t, w, report.TimingsFile)), &tim); err != nil || tim.Verdict != "FAILED" || tim.Stages == nil {
		t.Errorf("timings.json: %+v %v", tim, err)
	}
	noLeaks(t, w)
}

func TestZeroInputIsAFailureForLackOfEvidence(t *testing.T) {
	w := artifactstest.NewWriter(t, artifacts.DefaultMaxFileSize, password)
	res, err := report.Write(w, report.Input{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != report.VerdictFailed {
		t.Fatalf("a run nothing is known about was reported %s", res.Verdict)
	}
	if sum := artifactstest.Read(t, w, report.SummaryFile); !strings.Contains(sum, "nothing ran") {
		t.Fatalf("summary does not say nothing ran:\n%s", sum)
	}
}

func TestBeforeSuiteFailureFromGinkgoReport(t *testing.T) {
	w := artifactstest.NewWriter(t, artifacts.DefaultMaxFileSize, password)
	start := time.Now().Add(-3 * time.Second)
	suite := types.Report{SuiteDescription: "e2e", SuiteSucceeded: false, StartTime: start, EndTime: time.Now(), RunTime: 3 * time.Second,
		SpecReports: types.SpecReports{{LeafNodeType: types.NodeTypeBeforeSuite, State: types.SpecStateFailed, StartTime: start,
			Failure: types.Failure{Message: "kind create cluster: Cannot connect to the Docker daemon at unix:///var/run/docker.sock (login " + password + ")",
				Location: types.CodeLocation{FileName: "e2e/suite_test.go", LineNumber: 42}}}}}
	res, err := report.Write(w, report.Input{Suite: &suite})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stage != "BeforeSuite" || res.Classification.Category != report.Infrastructure {
		t.Fatalf("result %+v", res)
	}
	junit := artifactstest.Read(t, w, report.JUnitFile)
	if _, failures, _ := junitCounts(t, junit); failures != 1 || !strings.Contains(junit, "Cannot connect to the Docker daemon") {
		t.Fatalf("junit does not carry the failure:\n%s", junit)
	}
	if !strings.Contains(artifactstest.Read(t, w, report.SummaryFile), "at `e2e/suite_test.go:42`") {
		t.Error("summary lacks the failure location")
	}
	noLeaks(t, w)
}

func TestFullRunSummaryAndIndex(t *testing.T) {
	w := artifactstest.NewWriter(t, artifacts.DefaultMaxFileSize, password)
	st, err := run.New(w.Root(), "r-2", "local", "config/local.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"bootstrap", "management"} {
		must(t, st.StartStage(s))
		time.Sleep(5 * time.Millisecond)
	}
	must(t, st.EndStage("bootstrap", run.StatusPassed, ""))
	must(t, st.EndStage("management", run.StatusFailed, "timed out waiting for Cluster default/mgmt Available"))
	must(t, w.WriteFile("clusters/management-mgmt/pods/capi-system/capi-controller-manager-x/manager.log", []byte("E0101 reconcile failed\n")))
	placement := filepath.Join(t.TempDir(), "matrix.html")
	must(t, os.WriteFile(placement, []byte(`<html><body><table id="placement-matrix"><tr><td>coredns</td><td>ok</td></tr></table></body></html>`), 0o644))
	w.Fail("cluster management/mgmt: logs kube-system/etcd-0/etcd", errors.New("timed out"))

	findings := []artifacts.ClusterFindings{{Name: "mgmt", Role: "management", Folder: "clusters/management-mgmt", Seconds: 4.2,
		ConditionTrees: []artifacts.ConditionTree{{Cluster: "default/mgmt", File: "clusters/management-mgmt/cluster-tree/default-mgmt.txt",
			Text: "Cluster/mgmt  Available=False(NotAvailable)\n└─ControlPlane - KubeadmControlPlane/mgmt  Available=False(NotAvailable)"}},
		NotReadyPods: []artifacts.PodFinding{{Namespace: "capi-system", Name: "capi-controller-manager-x", Phase: "Running", Reason: "CrashLoopBackOff", Restarts: 5,
			Containers: []artifacts.ContainerFinding{{Name: "manager", State: "waiting", Reason: "CrashLoopBackOff",
				LogFile: "clusters/management-mgmt/pods/capi-system/capi-controller-manager-x/manager.log", LogTail: "E0101 reconcile failed\n```\nfence inside"}}}},
		FailedPackages:         []artifacts.PackageFinding{{Namespace: "tkg-system", Name: "pkg", Package: "p.example.com", Version: "1.0.0", Message: "ytt: Error: schema"}},
		MachinesWithoutNodeRef: []artifacts.MachineFinding{{Namespace: "default", Name: "mgmt-md-0-abc", Cluster: "mgmt", Phase: "Provisioned", InfrastructureProvisioned: true}},
	}}
	res, err := report.Write(w, report.Input{RunID: "r-2", Profile: "local", State: st, Clusters: findings, PlacementMatrixHTML: placement,
		VSphere: &artifacts.VSphereFindings{Folder: "/DC0/vm/run", Files: "vsphere", VMs: 3, Templates: []string{"ubuntu-2204"}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stage != "management" || res.Classification.Rule != "controller-pod-failing" {
		t.Fatalf("result %+v", res)
	}
	sum := artifactstest.Read(t, w, report.SummaryFile)
	for _, want := range []string{"**Failing stage:** management", "| bootstrap | passed |", "| management | failed |",
		"#### Cluster default/mgmt", "KubeadmControlPlane/mgmt", "#### Machines without NodeRef", "mgmt-md-0-abc",
		"#### Failed PackageInstalls", "ytt: Error: schema", "**capi-system/capi-controller-manager-x**", "E0101 reconcile failed",
		"````text", "[failed] cluster management/mgmt: logs kube-system/etcd-0/etcd", "## vSphere", "ubuntu-2204"} {
		if !strings.Contains(sum, want) {
			t.Errorf("SUMMARY.md lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(sum)
	}

	page := artifactstest.Read(t, w, report.IndexFile)
	if !strings.Contains(page, `class="verdict FAILED"`) || !strings.Contains(page, `id="placement-matrix"`) {
		t.Error("index.html lacks the verdict or the placement matrix")
	}
	if strings.Contains(page, "<html><body><table") {
		t.Error("placement matrix embedded as a whole document")
	}
	if !regexp.MustCompile(`class="bar failed" style="left:\d+\.\d+%;width:\d+\.\d+%"`).MatchString(page) {
		t.Error("timeline bar missing or its style was rejected by the template")
	}
	// Every file in the folder is linked, and every link points at a file.
	links := map[string]bool{}
	for _, m := range regexp.MustCompile(`href="([^"]+)"`).FindAllStringSubmatch(page, -1) {
		links[m[1]] = true
		if _, err := os.Stat(filepath.Join(w.Root(), filepath.FromSlash(m[1]))); err != nil {
			t.Errorf("link %s points at nothing", m[1])
		}
	}
	must(t, filepath.WalkDir(w.Root(), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(w.Root(), p)
		if rel = filepath.ToSlash(rel); rel != report.IndexFile && !links[rel] {
			t.Errorf("%s is not linked from index.html", rel)
		}
		return nil
	}))
	noLeaks(t, w)
}

func TestPassedRun(t *testing.T) {
	w, st := newRun(t, "r-3")
	passStage(t, st, "bootstrap")
	res, err := report.Write(w, report.Input{State: st})
	must(t, err)
	if res.Verdict != report.VerdictPassed || res.Classification.Category != report.None {
		t.Fatalf("result %+v", res)
	}
	if tests, failures, _ := junitCounts(t, artifactstest.Read(t, w, report.JUnitFile)); tests != 1 || failures != 0 {
		t.Fatalf("junit tests=%d failures=%d", tests, failures)
	}
}

// newRun is a run's state in a fresh artifacts folder.
func newRun(t *testing.T, id string) (*artifacts.Writer, *run.State) {
	t.Helper()
	w := artifactstest.NewWriter(t, artifacts.DefaultMaxFileSize, password)
	st, err := run.New(w.Root(), id, "local", "")
	must(t, err)
	return w, st
}

func passStage(t *testing.T, st *run.State, stage string) {
	t.Helper()
	must(t, st.StartStage(stage))
	must(t, st.EndStage(stage, run.StatusPassed, ""))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Steps timed by someone else (the tanzu CLI's phases) reach timings.json;
// a run that recorded none writes no steps key, as before.
func TestTimingsCarryRecordedSteps(t *testing.T) {
	w, st := newRun(t, "r-4")
	passStage(t, st, "bootstrap")
	_, err := report.Write(w, report.Input{State: st})
	must(t, err)
	if tim := artifactstest.Read(t, w, report.TimingsFile); strings.Contains(tim, `"steps"`) {
		t.Errorf("timings.json of a run without recorded steps has a steps key:\n%s", tim)
	}
	must(t, st.StartStage("management"))
	must(t, st.SetStageSteps("management", []run.StepTiming{{Name: "tanzu/move", Seconds: 14.2}}))
	must(t, st.EndStage("management", run.StatusPassed, ""))
	_, err = report.Write(w, report.Input{State: st})
	must(t, err)
	var tim struct {
		Steps map[string][]run.StepTiming `json:"steps"`
	}
	must(t, json.Unmarshal([]byte(artifactstest.Read(t, w, report.TimingsFile)), &tim))
	if got := tim.Steps["management"]; len(got) != 1 || got[0].Name != "tanzu/move" || got[0].Seconds != 14.2 {
		t.Errorf("timings.json steps: %+v", tim.Steps)
	}
}

// A stage that acted on several clusters has a row per cluster in
// SUMMARY.md's stage table and in index.html's timeline, each with its own
// status, time and cause.
func TestPerClusterResultsInTheSummaryAndIndex(t *testing.T) {
	w, st := newRun(t, "r-5")
	must(t, st.StartStage("workload"))
	must(t, st.SetStageCluster("workload", run.ClusterResult{ID: "workload", Name: "wl-a", Status: run.StatusPassed, Seconds: 91.24}))
	must(t, st.SetStageCluster("workload", run.ClusterResult{ID: "workload-2", Name: "wl-b", Status: run.StatusFailed, Seconds: 40,
		Message: "Unschedulable: 0/2 nodes are available\nmore"}))
	must(t, st.EndStage("workload", run.StatusFailed, "workload-2 cluster wl-b: Unschedulable: 0/2 nodes are available"))
	_, err := report.Write(w, report.Input{State: st})
	must(t, err)
	sum := artifactstest.Read(t, w, report.SummaryFile)
	for _, want := range []string{"| workload / workload wl-a | passed | 91.2 |  |", "| workload / workload-2 wl-b | failed | 40.0 | Unschedulable: 0/2 nodes are available |"} {
		if !strings.Contains(sum, want) {
			t.Errorf("SUMMARY.md lacks the row %q:\n%s", want, sum)
		}
	}
	if idx := artifactstest.Read(t, w, "index.html"); !strings.Contains(idx, "workload / workload-2 wl-b") {
		t.Error("index.html's timeline has no row for workload-2")
	}
}

// A day-two stage's timeline (each probe's outage windows, each Machine's
// replacement) is in SUMMARY.md and index.html, linked to its page.
func TestDayTwoTimelineInTheSummaryAndIndex(t *testing.T) {
	w := artifactstest.NewWriter(t, artifacts.DefaultMaxFileSize, password)
	_, err := report.Write(w, report.Input{RunID: "r-2", DayTwo: []report.DayTwoResult{{Stage: "upgrade", Title: "Upgrade of upg from v1.32.5 to v1.33.1",
		Report: "upgrade.md",
		Probes: []string{"Service tkg-e2e-probe: 0.8s out in 1 window(s) over 146s (585 polls, 3 failed)", "outage +41.2s..+42.0s (0.8s): connection refused"},
		Events: []string{"+76.1s upg-cp-a gone (control-plane, v1.32.5)"}},
		{Stage: "provider-upgrade", Title: "Provider upgrade of pum", Notes: []string{"clusterctl upgrade apply in 24.1s: cluster-api v1.13.0 -> v1.14.0"}}}})
	if err != nil {
		t.Fatal(err)
	}
	sum, idx := artifactstest.Read(t, w, report.SummaryFile), html.UnescapeString(artifactstest.Read(t, w, "index.html"))
	for _, want := range []string{"Upgrade of upg from v1.32.5 to v1.33.1", "0.8s out in 1 window(s)", "+41.2s..+42.0s (0.8s): connection refused",
		"+76.1s upg-cp-a gone (control-plane, v1.32.5)", "upgrade.md", "Provider upgrade of pum", "cluster-api v1.13.0 -> v1.14.0"} {
		if !strings.Contains(sum, want) {
			t.Errorf("SUMMARY.md lacks %q", want)
		}
		if !strings.Contains(idx, want) {
			t.Errorf("index.html lacks %q", want)
		}
	}
}
