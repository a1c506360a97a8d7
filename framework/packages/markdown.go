package packages

import (
	"fmt"
	"strings"
)

// Markdown renders the report: a table of every expected PackageInstall, then
// for each failing one its package, versions, conditions and the error
// kapp-controller gave, so the failure message needs no kubectl afterwards.
func (r *Report) Markdown() string {
	var b strings.Builder
	status := "PASSED"
	if r.Failed() {
		status = "FAILED"
	}
	fmt.Fprintf(&b, "## Packages on the %s cluster %s: %s\n\n%s\n\n", r.Role, r.Cluster, status, r.Summary())
	b.WriteString("| PackageInstall | Namespace | Location | Package | Version | State | Verdict |\n|---|---|---|---|---|---|---|\n")
	for _, res := range r.Results {
		e, st := res.Expected, res.State
		pkg := or(st.PackageRef, e.PackageRef)
		if e.PackageRef != "" && st.PackageRef != "" && st.PackageRef != e.PackageRef {
			pkg = fmt.Sprintf("%s (want %s)", st.PackageRef, e.PackageRef)
		}
		version := or(st.Version, st.LastAttemptedVersion)
		if e.Version != "" {
			version += " (want " + e.Version + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s %s |\n", cell(e.Name), cell(e.Namespace), e.location(), cell(pkg),
			cell(version), or(string(st.Phase), "–"), mark(res.Verdict), res.Verdict)
	}
	for _, res := range r.Results {
		if !res.Verdict.Failing() && res.Verdict != VerdictSkipped {
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
	fmt.Fprintf(b, "\n### %s %s/%s: %s\n\n", mark(res.Verdict), e.Namespace, e.Name, res.Verdict)
	if res.Verdict == VerdictSkipped || st.Phase == PhaseMissing || st.Phase == "" {
		fmt.Fprintf(b, "- %s\n", res.Problem)
		return
	}
	fmt.Fprintf(b, "- package `%s`, version selection `%s`, resolved version `%s`, last attempted `%s`\n",
		or(st.PackageRef, "–"), or(st.VersionSelection, "–"), or(st.Version, "–"), or(st.LastAttemptedVersion, "–"))
	if res.Verdict == VerdictMismatch {
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
			fmt.Fprintf(b, ": %s", strings.Join(strings.Fields(c.Message), " "))
		}
		b.WriteString("\n")
	}
	if st.UsefulErrorMessage != "" {
		b.WriteString("- status.usefulErrorMessage:\n\n")
		fenced(b, st.UsefulErrorMessage)
	} else if st.Message != "" && res.Verdict != VerdictOK {
		// The missing-package-version case: kapp-controller leaves
		// usefulErrorMessage empty and the cause is only in the condition.
		b.WriteString("- status.usefulErrorMessage is empty; the cause is the condition message:\n\n")
		fenced(b, st.Message)
	}
}

func fenced(b *strings.Builder, text string) {
	fence := "```"
	for strings.Contains(text, fence) {
		fence += "`"
	}
	fmt.Fprintf(b, "  %s\n", fence)
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		fmt.Fprintf(b, "  %s\n", line)
	}
	fmt.Fprintf(b, "  %s\n", fence)
}

func mark(v Verdict) string {
	switch {
	case v == VerdictSkipped:
		return "–"
	case v.Failing():
		return "✗"
	default:
		return "✓"
	}
}

func cell(s string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", `\|`)
}

func or(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}
