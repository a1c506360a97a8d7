package packages

import (
	"fmt"
	"strings"

	"github.com/tkg-e2e/harness/framework/assert"
)

// Markdown renders the report: a table of every expected PackageInstall, then
// for each failing one its package, versions, conditions and the error
// kapp-controller gave, so the failure message needs no kubectl afterwards.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Packages on the %s cluster %s: %s\n\n%s\n\n", r.Role, r.Cluster, assert.Passed(r.Failed()), r.Summary())
	var rows [][]string
	for _, res := range r.Results {
		e, st := res.Expected, res.State
		pkg := assert.Or(st.PackageRef, e.PackageRef)
		if e.PackageRef != "" && st.PackageRef != "" && st.PackageRef != e.PackageRef {
			pkg = fmt.Sprintf("%s (want %s)", st.PackageRef, e.PackageRef)
		}
		version := assert.Or(st.Version, st.LastAttemptedVersion)
		if e.Version != "" {
			version += " (want " + e.Version + ")"
		}
		verdict := string(res.Verdict)
		if res.Verdict == assert.Absent {
			verdict = "absent (optional)" // only optional entries may be absent
		}
		rows = append(rows, []string{e.Name, e.Namespace, string(e.location()), pkg, version,
			assert.Or(string(st.Phase), "–"), res.Verdict.Symbol() + " " + verdict})
	}
	b.WriteString(assert.MarkdownTable([]string{"PackageInstall", "Namespace", "Location", "Package", "Version", "State", "Verdict"}, rows))
	for _, res := range r.Results {
		if !res.Verdict.Failing() && res.Verdict != assert.SkippedVerdict {
			continue
		}
		writeDetail(&b, res)
	}
	if cb := r.ClusterBootstrap; cb != nil {
		b.WriteString("\n" + cb.Markdown())
	}
	return b.String()
}

func writeDetail(b *strings.Builder, res Result) {
	e, st := res.Expected, res.State
	fmt.Fprintf(b, "\n### %s %s/%s: %s\n\n", res.Verdict.Symbol(), e.Namespace, e.Name, res.Verdict)
	if res.Verdict == assert.SkippedVerdict || st.Phase == PhaseMissing || st.Phase == "" {
		fmt.Fprintf(b, "- %s\n", res.Problem)
		return
	}
	fmt.Fprintf(b, "- package `%s`, version selection `%s`, resolved version `%s`, last attempted `%s`\n",
		assert.Or(st.PackageRef, "–"), assert.Or(st.VersionSelection, "–"), assert.Or(st.Version, "–"), assert.Or(st.LastAttemptedVersion, "–"))
	if res.Verdict == assert.Mismatch {
		fmt.Fprintf(b, "- %s\n", res.Problem)
	}
	fmt.Fprintf(b, "- generation %d, observed generation %d\n", st.Generation, st.ObservedGeneration)
	if len(st.Conditions) == 0 {
		b.WriteString("- conditions: none yet\n")
	}
	for _, c := range st.Conditions {
		fmt.Fprintf(b, "- condition %s=%s", c.Type, c.Status)
		if c.Reason != "" {
			fmt.Fprintf(b, " (%s)", c.Reason)
		}
		if c.Message != "" {
			fmt.Fprintf(b, ": %s", assert.OneLine(c.Message))
		}
		b.WriteString("\n")
	}
	if st.UsefulErrorMessage != "" {
		b.WriteString("- status.usefulErrorMessage:\n\n")
		assert.Fenced(b, st.UsefulErrorMessage, "  ")
	} else if st.Message != "" && res.Verdict != assert.OK {
		// The missing-package-version case: kapp-controller leaves
		// usefulErrorMessage empty and the cause is only in the condition.
		b.WriteString("- status.usefulErrorMessage is empty; the cause is the condition message:\n\n")
		assert.Fenced(b, st.Message, "  ")
	}
}
