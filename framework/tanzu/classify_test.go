package tanzu

import (
	"strings"
	"testing"

	"github.com/tkg-e2e/harness/framework/assert/asserttest"
)

func classifyLines(e ending, lines ...string) *Failure {
	c := newClassifier()
	for _, l := range lines {
		c.line(l)
	}
	return c.classify(e)
}

func TestClassifySuccessIsNoFailure(t *testing.T) {
	if f := classifyLines(ending{Command: "tanzu version"}, "Error: this line alone does not make a failure"); f != nil {
		t.Errorf("exit 0 classified as %v", f)
	}
}

func TestClassifyVCenterAndNotPlainMentions(t *testing.T) {
	e := ending{Command: "tanzu management-cluster create", ExitCode: 1}
	f := classifyLines(e,
		"vSphere 7.0 Environment Detected.",
		"Error: unable to set up management cluster: ServerFaultCode: Permission to perform this operation was denied.")
	if f.Kind != KindVCenter || len(f.Quoted) != 1 || !strings.Contains(f.Quoted[0], "Permission to perform") {
		t.Errorf("got %q quoting %q", f.Kind, f.Quoted)
	}
	f = classifyLines(e, "vSphere 7.0 Environment Detected.", "Error: something else broke")
	if f.Kind != KindUnknown || strings.Join(f.Quoted, "\n") != "Error: something else broke" {
		t.Errorf("a plain mention of vSphere classified %q quoting %q", f.Kind, f.Quoted)
	}
}

func TestClassifyUnknownQuotesTailWithoutErrorLines(t *testing.T) {
	var lines []string
	for i := 0; i < 30; i++ {
		lines = append(lines, "line "+string(rune('a'+i%26)))
	}
	f := classifyLines(ending{Command: "tanzu cluster create", ExitCode: 2}, lines...)
	if f.Kind != KindUnknown || len(f.Quoted) != tailLines || f.Quoted[len(f.Quoted)-1] != lines[len(lines)-1] {
		t.Errorf("got %q with %d quoted lines ending %q", f.Kind, len(f.Quoted), f.Quoted)
	}
}

func TestClassifySIGINTFromElsewhereIsInterrupted(t *testing.T) {
	f := classifyLines(ending{Command: "tanzu cluster create", ExitCode: -1, Signal: "interrupt"}, "waiting for cluster to be initialized...")
	if f.Kind != KindInterrupted {
		t.Errorf("got %q", f.Kind)
	}
	asserttest.Says(t, "markdown", f.Markdown(), "interrupted", "ended by interrupt")
}

func TestMarkdownFenceOutgrowsBackticks(t *testing.T) {
	f := &Failure{Kind: KindUnknown, Command: "tanzu `x`", ExitCode: 1, Quoted: []string{"Error: a ``` in the output"}}
	md := f.Markdown()
	asserttest.Says(t, "markdown", md, "````\nError: a ``` in the output\n````", "`tanzu 'x'`")
}

func TestClassifyCutsLongLines(t *testing.T) {
	long := "Error: " + strings.Repeat("x", 5000)
	f := classifyLines(ending{Command: "tanzu cluster create", ExitCode: 1}, long)
	if len(f.Quoted) != 1 || len(f.Quoted[0]) > maxQuoted+len("…") || !strings.HasPrefix(f.Quoted[0], "Error: xxx") {
		t.Errorf("quoted %d lines, first %d bytes", len(f.Quoted), len(f.Quoted[0]))
	}
}
