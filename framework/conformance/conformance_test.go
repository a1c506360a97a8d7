package conformance

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestParseJUnitKeepsEveryConformanceTestWithItsSkipReason(t *testing.T) {
	all, err := parseJUnit("testdata/junit_kubetest.wl.01.xml")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 7 {
		t.Fatalf("parsed %d test cases, want 7", len(all))
	}
	tests, err := classify(all, "/x/local-subset.yaml", "needs images not built here")
	if err != nil {
		t.Fatal(err)
	}
	r := &Result{Cluster: "wl", Tests: tests, Config: "local-subset.yaml"}
	if len(tests) != 5 {
		t.Fatalf("kept %d tests, want the 5 [Conformance] ones: %+v", len(tests), tests)
	}
	if r.Count(Passed) != 1 || r.Count(Failed) != 1 || r.Count(Skipped) != 3 {
		t.Fatalf("counts passed %d failed %d skipped %d", r.Count(Passed), r.Count(Failed), r.Count(Skipped))
	}
	want := map[string]string{
		"[sig-apps] Daemon set [Serial] should rollback without unnecessary restarts [Conformance]": "not selected by local-subset.yaml: needs images not built here",
		"[sig-storage] Projected secret should be consumable [NodeConformance] [Conformance]":       "skipped by the test: Only supported for providers [gce gke] (not skeleton)",
		"[sig-apps] pending thing [Conformance]":                                                    "pending in e2e.test",
	}
	for _, tc := range tests {
		if tc.Status != Skipped {
			if tc.SkipReason != "" {
				t.Errorf("%s is %s but has a skip reason", tc.Name, tc.Status)
			}
			continue
		}
		if tc.SkipReason != want[tc.Name] {
			t.Errorf("skip reason of %q = %q, want %q", tc.Name, tc.SkipReason, want[tc.Name])
		}
	}
	if !r.Failed() {
		t.Fatal("a failed conformance test must fail the result")
	}
	msg := r.Error().Error()
	for _, s := range []string{"FAILED [sig-network] Services should serve a basic endpoint from pods", "timed out waiting for the condition", "1 passed, 1 failed, 3 skipped of 5"} {
		if !strings.Contains(msg, s) {
			t.Errorf("error lacks %q:\n%s", s, msg)
		}
	}
	md := r.Markdown()
	for _, s := range []string{"# Kubernetes conformance: FAILED", "## Skipped (3): not run, never counted as passed", "### not selected by local-subset.yaml: needs images not built here (1)", "## Passed (1)"} {
		if !strings.Contains(md, s) {
			t.Errorf("markdown lacks %q:\n%s", s, md)
		}
	}
}

func TestNothingRunIsAFailureNotAPass(t *testing.T) {
	r := &Result{Cluster: "wl", Config: "c.yaml", Focus: "nomatch", Tests: []Test{{Name: "a [Conformance]", Status: Skipped, SkipReason: "not selected"}}}
	if !r.Failed() {
		t.Fatal("a run where every test was skipped passed")
	}
	if err := r.Error(); err == nil || !strings.Contains(err.Error(), "no conformance test ran") {
		t.Fatalf("error = %v", err)
	}
}

func TestSuiteLevelFailureIsAnError(t *testing.T) {
	all := []Test{{Name: "[SynchronizedBeforeSuite]", Status: Failed, Message: "nodes not ready"}, {Name: "x [Conformance]", Status: Skipped, Message: "skipped"}}
	_, err := classify(all, "c.yaml", "")
	if err == nil || !strings.Contains(err.Error(), "[SynchronizedBeforeSuite] failed: nodes not ready") {
		t.Fatalf("err = %v", err)
	}
}

func TestReadSelection(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sel, err := ReadSelection(write("ok.yaml", "ginkgo.focus: \\[Conformance\\]\nginkgo.skip: \\[Serial\\]\nginkgo.v: true\n"))
	if err != nil || sel.Focus != `\[Conformance\]` || sel.Skip != `\[Serial\]` {
		t.Fatalf("sel %+v err %v", sel, err)
	}
	for name, c := range map[string]struct{ body, want string }{
		"nofocus.yaml": {"ginkgo.skip: x\n", "has no ginkgo.focus"},
		"nested.yaml":  {"ginkgo.focus: x\nginkgo:\n  focus: y\n", "is a map"},
		"number.yaml":  {"ginkgo.focus: 3\n", "want a string"},
		"list.yaml":    {"- a\n", "not a flat YAML map"},
	} {
		_, err := ReadSelection(write(name, c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: err = %v, want it to name the file and say %q", name, err, c.want)
		}
	}
	if _, err := ReadSelection(filepath.Join(dir, "missing.yaml")); err == nil || !strings.Contains(err.Error(), "conformance.kubetestConfig") {
		t.Errorf("missing file: %v", err)
	}
}

func TestInputValidationNamesEveryMissingField(t *testing.T) {
	err := Input{}.validate()
	if err == nil {
		t.Fatal("empty input accepted")
	}
	for _, s := range []string{"ClusterName is empty", "ConfigFile is empty", "Image is empty", "WorkDir is empty", "Scheme is nil", "Writer is nil", "Timeout must be > 0"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("validation error lacks %q: %v", s, err)
		}
	}
}

// The shipped local subset: Ginkgo matches ginkgo.focus against
// "<suite description> <spec text>", so the regex must select exactly the
// tests local-subset.txt lists, and none of the other conformance tests of
// v1.33 (images-v1.33.tsv lists every non-serial one).
func TestLocalSubsetSelectsExactlyItsList(t *testing.T) {
	sel, err := ReadSelection("../../config/conformance/local-subset.yaml")
	if err != nil {
		t.Fatal(err)
	}
	focus := regexp.MustCompile(sel.Focus)
	skip := regexp.MustCompile(sel.Skip)
	selected := func(name string) bool {
		text := "Kubernetes e2e suite " + name
		return focus.MatchString(text) && !skip.MatchString(text)
	}
	read := func(path string, field int) []string {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for i, line := range strings.Split(string(data), "\n") {
			if line == "" || (field > 0 && i == 0) {
				continue
			}
			out = append(out, strings.Split(line, "\t")[0])
		}
		return out
	}
	want := map[string]bool{}
	for _, n := range read("../../config/conformance/local-subset.txt", 0) {
		want[n] = true
		if !selected(n) {
			t.Errorf("local-subset.txt lists %q but the focus does not select it", n)
		}
	}
	all := read("../../config/conformance/images-v1.33.tsv", 1)
	n := 0
	for _, name := range all {
		if selected(name) {
			n++
			if !want[name] {
				t.Errorf("the focus also selects %q, which local-subset.txt does not list", name)
			}
		}
	}
	if n != len(want) || len(all) < 300 {
		t.Errorf("the focus selects %d of %d conformance tests, local-subset.txt lists %d", n, len(all), len(want))
	}
}

// A resumed run runs the stage again in the same folder: the JUnit of the
// earlier run must be gone before kubetest runs, so that a run that writes
// none is reported as such and not with the old results.
func TestClearPreviousRemovesOnlyOldJUnit(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"junit.kubetest.wl.01.xml", "junit_other.xml", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := clearPrevious(dir); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(left) != 1 || filepath.Base(left[0]) != "notes.txt" {
		t.Fatalf("left %v, want only notes.txt", left)
	}
}
