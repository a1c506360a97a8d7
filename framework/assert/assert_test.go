package assert

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tkg-e2e/harness/framework/artifacts"
	"github.com/tkg-e2e/harness/framework/kube"
)

// fakeCheck covers every target of a role; a target named "bad" never
// passes, "flaky" passes on the third poll, "cb" fails only in Finish.
type fakeCheck struct {
	role     string
	finished []string
	plans    []Options
}

type fakeReport struct {
	target string
	rows   []Row
}

func (r *fakeReport) Rows() []Row { return r.rows }
func (r *fakeReport) Failed() bool {
	for _, row := range r.rows {
		if row.Verdict.Failing() {
			return true
		}
	}
	return false
}
func (r *fakeReport) Summary() string { return r.target + ": " + Count(r.rows).String() }
func (r *fakeReport) Failure(waited time.Duration) string {
	return fmt.Sprintf("fake check of %s failed after %s", r.target, waited.Round(time.Second))
}

func (c *fakeCheck) Name() string { return "fake" }

func (c *fakeCheck) Plan(t Target, opts Options) (Probe, error) {
	c.plans = append(c.plans, opts)
	switch {
	case t.Name == "broken":
		return nil, errors.New("cannot plan")
	case t.Role != c.role:
		return nil, nil
	}
	return &fakeProbe{check: c, target: t}, nil
}

func (c *fakeCheck) Render(reports []Report) (string, string, error) {
	var b strings.Builder
	for _, r := range reports {
		fmt.Fprintf(&b, "- %s\n", r.Summary())
	}
	return b.String(), "", nil
}

type fakeProbe struct {
	check  *fakeCheck
	target Target
	polls  int
}

func (p *fakeProbe) What() string { return "fake " + p.target.Name }

func (p *fakeProbe) Observe(ctx context.Context) (Report, error) {
	p.polls++
	if p.target.Name == "cut" && p.polls > 1 {
		// A reading the wait's deadline cuts: its rows carry the context's error.
		<-ctx.Done()
		return &fakeReport{target: p.target.Name, rows: []Row{{Name: "a", Verdict: Error, Detail: ctx.Err().Error()}}}, nil
	}
	v := OK
	if p.target.Name == "cut" {
		v = Missing
	}
	if p.target.Name == "bad" || (p.target.Name == "flaky" && p.polls < 3) {
		v = NotReady
	}
	return &fakeReport{target: p.target.Name, rows: []Row{{Name: "a", Verdict: v, Detail: "why <a>"}, {Name: "b", Verdict: SkippedVerdict, Detail: "no API"}}}, nil
}

func (p *fakeProbe) Finish(_ context.Context, last Report, settled bool) error {
	p.check.finished = append(p.check.finished, fmt.Sprintf("%s settled=%v", p.target.Name, settled))
	if p.target.Name == "cb" {
		return errors.New("mirror differs")
	}
	return nil
}

func fakeTarget(role, name string) Target {
	return Target{Role: role, Name: name, Cluster: &kube.Cluster{Client: fake.NewClientBuilder().Build()}}
}

func newWriter(t *testing.T) *artifacts.Writer {
	t.Helper()
	w, err := artifacts.New(artifacts.Options{Root: t.TempDir(), MaxFileSize: artifacts.DefaultMaxFileSize})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

var quick = Options{Timeout: 100 * time.Millisecond, Interval: 10 * time.Millisecond}

func TestCheckTargetWaitsUntilPassing(t *testing.T) {
	c := &fakeCheck{role: Workload}
	r, err := CheckTarget(context.Background(), c, fakeTarget(Workload, "flaky"), Options{Timeout: time.Second, Interval: 10 * time.Millisecond})
	if err != nil || r.Failed() {
		t.Fatalf("err=%v report=%v", err, r)
	}
	if strings.Join(c.finished, ";") != "flaky settled=true" {
		t.Errorf("Finish must run once, settled: %v", c.finished)
	}
}

func TestCheckTargetFailureCarriesLastReport(t *testing.T) {
	c := &fakeCheck{role: Workload}
	r, err := CheckTarget(context.Background(), c, fakeTarget(Workload, "bad"), quick)
	var failed *FailedError
	if !errors.As(err, &failed) || failed.Report != r || failed.Check != "fake" || failed.Target.Name != "bad" {
		t.Fatalf("want a *FailedError carrying the last report, got %v", err)
	}
	if !strings.HasPrefix(err.Error(), "fake check of bad failed after") {
		t.Errorf("the message is the report's Failure: %v", err)
	}
	if strings.Join(c.finished, ";") != "bad settled=false" {
		t.Errorf("Finish must run once with the last report: %v", c.finished)
	}
	if c.plans[0].Prefix != "[fake]" || c.plans[0].Redactor == nil {
		t.Errorf("options defaults not applied: %+v", c.plans[0])
	}
}

// A never-created object read "missing" until the wait's deadline cut the
// next reading short; that cut reading (rows saying "context deadline
// exceeded") had become the verdict.
func TestCheckTargetKeepsTheLastReadingTheDeadlineDidNotCut(t *testing.T) {
	c := &fakeCheck{role: Workload}
	r, err := CheckTarget(context.Background(), c, fakeTarget(Workload, "cut"), Options{Timeout: 200 * time.Millisecond, Interval: 5 * time.Millisecond})
	var failed *FailedError
	if !errors.As(err, &failed) {
		t.Fatalf("want a *FailedError, got %v", err)
	}
	if r == nil || len(r.Rows()) != 2 || r.Rows()[0].Verdict != Missing {
		t.Fatalf("the verdict must be the last whole reading (a: missing), got %+v", r)
	}
	if failed.Report != r {
		t.Errorf("the failure must carry that reading: %+v", failed.Report)
	}
	if strings.Join(c.finished, ";") != "cut settled=false" {
		t.Errorf("Finish must run once with the last whole reading: %v", c.finished)
	}
}

func TestCheckTargetRejectsBadInput(t *testing.T) {
	c := &fakeCheck{role: Workload}
	for name, tc := range map[string]struct {
		target Target
		opts   Options
		want   string
	}{
		"no cluster":     {Target{Role: Workload, Name: "x"}, quick, "no client"},
		"no timeout":     {fakeTarget(Workload, "x"), Options{}, "Timeout must be > 0"},
		"plan fails":     {fakeTarget(Workload, "broken"), quick, "cannot plan"},
		"not applicable": {fakeTarget(Management, "m"), quick, ErrNotApplicable.Error()},
	} {
		if _, err := CheckTarget(context.Background(), c, tc.target, tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", name, err, tc.want)
		}
	}
}

// Run is the one per-cluster loop: it skips roles outside the registry
// (bootstrap) and targets the check does not cover, goes on after a failing
// target, and writes both files through the Writer.
func TestRunLoopsOverTargetsAndWritesFiles(t *testing.T) {
	c := &fakeCheck{role: Workload}
	w := newWriter(t)
	targets := []Target{fakeTarget("bootstrap", "kind"), fakeTarget(Management, "mgmt"),
		fakeTarget(Workload, "bad"), fakeTarget(Workload, "cb"), fakeTarget(Workload, "good")}
	out, err := Run(context.Background(), c, targets, w, quick)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Checked) != 3 || len(out.Reports) != 3 {
		t.Fatalf("checked %d targets, want the three workload clusters", len(out.Checked))
	}
	if len(c.plans[0].Targets) != len(targets) || c.plans[0].Target(Management).Name != "mgmt" {
		t.Errorf("a check must see every target of the run: %+v", c.plans[0].Targets)
	}
	var got []string
	for _, f := range out.Failures {
		got = append(got, f.Error())
	}
	want := []string{`workload cluster "bad": bad: 0 pass, 1 fail, 0 warn, 1 skipped`, `workload cluster "cb": mirror differs`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("failures:\n%q\nwant\n%q", got, want)
	}
	if err := out.Err(); err == nil || !strings.Contains(err.Error(), "- good: 1 pass, 0 fail, 0 warn, 1 skipped") {
		t.Errorf("the outcome's error must end with the whole report: %v", err)
	}
	md, err := os.ReadFile(out.MarkdownPath)
	if err != nil || string(md) != out.Markdown {
		t.Errorf("fake.md: %v\n%s", err, md)
	}
	page, err := os.ReadFile(out.HTMLPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`workload cluster &#34;bad&#34;: <b class="failed">FAILED</b>`, `<td class="bad">✗ not ready</td><td>why &lt;a&gt;</td>`,
		`<td class="skip">– skipped</td><td>no API</td>`, `<b class="passed">PASSED</b>`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("fake.html lacks %q:\n%s", want, page)
		}
	}
}

func TestRunNeedsACoveredTargetAndAWriter(t *testing.T) {
	c := &fakeCheck{role: WindowsWorkload}
	if _, err := Run(context.Background(), c, []Target{fakeTarget(Workload, "wl")}, newWriter(t), quick); err == nil ||
		!strings.Contains(err.Error(), `no cluster of this run is covered by the check (clusters: workload cluster "wl")`) {
		t.Errorf("err = %v", err)
	}
	if _, err := Run(context.Background(), c, nil, nil, quick); err == nil {
		t.Error("Run without a Writer accepted: files would bypass redaction")
	}
	c.role = Workload
	if _, err := Run(context.Background(), c, []Target{fakeTarget(Workload, "broken")}, newWriter(t), quick); err == nil {
		t.Error("a check that cannot plan must stop the run")
	}
}

func TestVerdicts(t *testing.T) {
	for v, want := range map[Verdict]string{
		OK: "pass ✓", Absent: "pass ✓", Missing: "fail ✗", NotReady: "fail ✗", Unexpected: "fail !", Failed: "fail ✗",
		NotReconciled: "fail ✗", Mismatch: "fail ✗", Error: "fail ✗", Unlisted: "warn !", Degraded: "warn !", SkippedVerdict: "skipped –",
		NotEvaluated: "skipped –", "made up": "fail ✗",
	} {
		if got := string(v.Status()) + " " + v.Symbol(); got != want {
			t.Errorf("%q: %s, want %s", v, got, want)
		}
	}
	if got := Count([]Row{{Verdict: OK}, {Verdict: Unlisted}, {Verdict: Missing}, {Verdict: SkippedVerdict}}).String(); got != "1 pass, 1 fail, 1 warn, 1 skipped" {
		t.Errorf("counts: %s", got)
	}
}

type shape struct {
	Name  string   `json:"name"`
	Roles []string `json:"roles"`
}

func parse(data []byte, source string) (*shape, error) {
	return Parse(data, source, func(s *shape, p *Problems) *shape {
		if s.Name == "" {
			p.Add(source, "name is required")
		}
		for i, r := range s.Roles {
			p.Role(fmt.Sprintf("%s: roles[%d]", source, i), r)
		}
		return s
	})
}

func TestLoadReportsEveryProblemWithItsPlace(t *testing.T) {
	if _, err := Load("no/such.yaml", "test file", parse); err == nil || !strings.HasPrefix(err.Error(), "test file: open no/such.yaml") {
		t.Errorf("err = %v", err)
	}
	_, err := parse([]byte("roles: [workload, edge, bootstrap]\n"), "f.yaml")
	for _, want := range []string{"f.yaml: name is required", `f.yaml: roles[1]: unknown role "edge" (known roles: management, workload, windows-workload)`,
		`f.yaml: roles[2]: unknown role "bootstrap"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err lacks %q: %v", want, err)
		}
	}
	if _, err := parse([]byte("name: x\nnmae: y\n"), "f.yaml"); err == nil || !strings.Contains(err.Error(), `f.yaml: unknown key "nmae" (did you mean "name"?) (line 2; remove it or rename it to one of: name, roles)`) {
		t.Errorf("strict decoding: %v", err)
	}
	if s, err := parse([]byte("name: x\nroles: [management]\n"), "f.yaml"); err != nil || s.Name != "x" {
		t.Errorf("valid file: %v %v", s, err)
	}
}

func TestMarkdownPieces(t *testing.T) {
	table := MarkdownTable([]string{"A", "B"}, [][]string{{"x|y", "multi\nline"}})
	if table != "| A | B |\n|---|---|\n| x\\|y | multi line |\n" {
		t.Errorf("table:\n%s", table)
	}
	var b strings.Builder
	Fenced(&b, "has ``` inside\n", "  ")
	if b.String() != "  ````\n  has ``` inside\n  ````\n" {
		t.Errorf("fenced:\n%s", b.String())
	}
	if Shorten("a  b\nc", 3) != "a b…" || Or("", "–") != "–" || Passed(true) != "FAILED" {
		t.Error("helpers")
	}
}
