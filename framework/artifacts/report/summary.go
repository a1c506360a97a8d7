package report

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tkg-e2e/harness/framework/artifacts"
	"github.com/tkg-e2e/harness/framework/run"
)

// SummaryFile is the Markdown summary's name in the artifacts root.
const SummaryFile = "SUMMARY.md"

// summary renders SUMMARY.md. The order is the order of questions a reader
// asks: did it pass, where did it fail, whose problem is it, what did the
// clusters look like, and what could not be collected.
func summary(in Input, o outcome, items []artifacts.ItemRecord) string {
	var b strings.Builder
	title := "Harness run"
	if in.RunID != "" {
		title += " " + in.RunID
	}
	fmt.Fprintf(&b, "# %s: %s\n\n", title, o.Verdict)
	fmt.Fprintf(&b, "- **Verdict:** %s\n", o.Verdict)
	switch o.Verdict {
	case VerdictPassed:
	case VerdictStopped:
		fmt.Fprintf(&b, "- **Stopped stage:** %s (the stages after it did not run)\n", o.Stage)
	default:
		fmt.Fprintf(&b, "- **Failing stage:** %s\n", o.Stage)
	}
	fmt.Fprintf(&b, "- **Classification:** %s\n", o.Classification)
	if in.Profile != "" {
		fmt.Fprintf(&b, "- **Profile:** %s\n", in.Profile)
	}
	if !o.Started.IsZero() {
		fmt.Fprintf(&b, "- **Started:** %s (%s)\n", o.Started.UTC().Format(time.RFC3339), time.Duration(o.Seconds*float64(time.Second)).Round(time.Second))
	}
	if o.Why != "" {
		fmt.Fprintf(&b, "- **Why failed:** %s\n", o.Why)
	}

	if o.Message != "" {
		if o.Verdict == VerdictStopped {
			b.WriteString("\n## Stopped\n\n")
		} else {
			b.WriteString("\n## Failure\n\n")
		}
		b.WriteString(codeBlock(o.Message))
		if o.Location != "" {
			fmt.Fprintf(&b, "\nat `%s`\n", o.Location)
		}
	}

	b.WriteString("\n## Stages\n\n")
	var stages []run.StageTiming
	if in.State != nil {
		stages = in.State.Timings()
	}
	if len(stages) == 0 {
		b.WriteString("No stage was recorded: the run ended before its first stage.\n")
	} else {
		b.WriteString("| Stage | Status | Seconds | Message |\n|---|---|---:|---|\n")
		for _, s := range stages {
			msg := ""
			rec, ok := in.State.Stage(s.Stage)
			if ok {
				// Whole: the first line of a failure starts with its cause,
				// and a cause cut by a column width is no cause.
				msg, _, _ = strings.Cut(strings.TrimSpace(rec.Message), "\n")
			}
			fmt.Fprintf(&b, "| %s | %s | %.1f | %s |\n", cell(s.Stage), s.Status, s.Seconds, cell(msg))
			// A stage that acted on several clusters: a row per cluster.
			for _, c := range rec.Clusters {
				first, _, _ := strings.Cut(strings.TrimSpace(c.Message), "\n")
				fmt.Fprintf(&b, "| %s / %s %s | %s | %.1f | %s |\n", cell(s.Stage), cell(c.ID), cell(c.Name), c.Status, c.Seconds, cell(first))
			}
		}
	}

	if c := in.Conformance; c != nil {
		b.WriteString("\n## Conformance\n\n")
		verdict := "PASSED"
		if !c.Passed {
			verdict = "FAILED"
		}
		fmt.Fprintf(&b, "- **%s:** %s\n", verdict, c.Summary)
		if c.Report != "" {
			fmt.Fprintf(&b, "- **Report:** [%s](%s) (every conformance test: passed, failed, or skipped with its reason)\n", c.Report, c.Report)
		}
		if len(c.JUnit) > 0 {
			fmt.Fprintf(&b, "- **JUnit:** %s\n", strings.Join(c.JUnit, ", "))
		}
		for _, t := range c.FailedTests {
			fmt.Fprintf(&b, "- failed: %s\n", t)
		}
	}

	if len(in.DayTwo) > 0 {
		b.WriteString("\n## Day two\n")
		for _, d := range in.DayTwo {
			fmt.Fprintf(&b, "\n### %s\n\n", d.Title)
			if d.Report != "" {
				fmt.Fprintf(&b, "- **Report:** [%s](%s)\n", d.Report, d.Report)
			}
			for _, p := range append(slices.Clone(d.Notes), d.Probes...) {
				fmt.Fprintf(&b, "- %s\n", p)
			}
			for _, e := range d.Events {
				fmt.Fprintf(&b, "- %s\n", e)
			}
		}
	}

	b.WriteString("\n## Clusters\n\n")
	if len(in.Clusters) == 0 {
		b.WriteString("No cluster was collected: none existed yet, or collection did not run.\n")
	}
	for _, c := range in.Clusters {
		writeCluster(&b, c)
	}

	if v := in.VSphere; v != nil {
		b.WriteString("\n## vSphere\n\n")
		fmt.Fprintf(&b, "- Folder `%s`: %d VMs, templates: %s (files in `%s/`)\n", v.Folder, v.VMs, orNone(strings.Join(v.Templates, ", ")), v.Files)
		if v.APIError != "" {
			fmt.Fprintf(&b, "- **vCenter could not be reached:** %s\n", firstLineOf(v.APIError))
		}
		for _, t := range v.FailedTasks {
			fmt.Fprintf(&b, "- Failed task %s on %s (%s): %s\n", t.Name, t.Entity, t.Queued, firstLineOf(t.Error))
		}
		for _, e := range v.ErrorEvents {
			fmt.Fprintf(&b, "- Event: %s\n", firstLineOf(e))
		}
	}

	b.WriteString("\n## Collection\n\n")
	failed := 0
	for _, it := range items {
		if it.Outcome != artifacts.OutcomeSkipped {
			failed++
		}
	}
	fmt.Fprintf(&b, "%d item(s) could not be collected and %d were not collected by design or configuration; every one is listed in [%s](%s).\n",
		failed, len(items)-failed, artifacts.ErrorsFile, artifacts.ErrorsFile)
	shown := 0
	for _, it := range items {
		if it.Outcome == artifacts.OutcomeSkipped || shown == 10 {
			continue
		}
		shown++
		fmt.Fprintf(&b, "- [%s] %s: %s\n", it.Outcome, it.Item, firstLineOf(it.Message))
	}
	return b.String()
}

func writeCluster(b *strings.Builder, c artifacts.ClusterFindings) {
	fmt.Fprintf(b, "### %s %s\n\n", orDash(c.Role), c.Name)
	fmt.Fprintf(b, "Files: [%s/](%s/), collected in %.1fs.\n\n", c.Folder, c.Folder, c.Seconds)
	if c.APIError != "" {
		fmt.Fprintf(b, "- **API server did not answer:** %s\n", firstLineOf(c.APIError))
	}
	if c.DockerError != "" {
		fmt.Fprintf(b, "- **Node containers:** %s\n", firstLineOf(c.DockerError))
	}
	for _, t := range c.ConditionTrees {
		fmt.Fprintf(b, "\n#### Cluster %s ([tree](%s))\n\n", t.Cluster, t.File)
		b.WriteString(codeBlock(t.Text))
	}
	if len(c.MachinesWithoutNodeRef) > 0 {
		b.WriteString("\n#### Machines without NodeRef\n\n")
		for _, m := range c.MachinesWithoutNodeRef {
			fmt.Fprintf(b, "- %s/%s (cluster %s, phase %s, infrastructure provisioned: %t)%s\n", m.Namespace, m.Name, orDash(m.Cluster), orDash(m.Phase), m.InfrastructureProvisioned, suffix(m.Message))
		}
	}
	if len(c.NotReadyNodes) > 0 {
		b.WriteString("\n#### Nodes not Ready\n\n")
		for _, n := range c.NotReadyNodes {
			fmt.Fprintf(b, "- %s (%s)%s\n", n.Name, orDash(n.Reason), suffix(n.Message))
		}
	}
	if len(c.FailedPackages) > 0 {
		b.WriteString("\n#### Failed PackageInstalls\n\n")
		for _, p := range c.FailedPackages {
			fmt.Fprintf(b, "- %s/%s (%s %s):\n\n", p.Namespace, p.Name, orDash(p.Package), orDash(p.Version))
			b.WriteString(indent(codeBlock(p.Message), "  "))
		}
	}
	if len(c.NotReadyPods) > 0 {
		b.WriteString("\n#### Pods not ready\n\n")
		for _, p := range c.NotReadyPods {
			fmt.Fprintf(b, "- **%s/%s** on %s: %s %s, %d restarts%s\n", p.Namespace, p.Name, orDash(p.Node), p.Phase, orDash(p.Reason), p.Restarts, suffix(p.Message))
			for _, ctr := range p.Containers {
				fmt.Fprintf(b, "  - container %s: %s %s", ctr.Name, ctr.State, ctr.Reason)
				if ctr.LogFile != "" {
					fmt.Fprintf(b, " ([log](%s))", ctr.LogFile)
				}
				b.WriteString("\n")
				if ctr.LogTail != "" {
					b.WriteString("\n")
					b.WriteString(indent(codeBlock(ctr.LogTail), "    "))
				}
			}
		}
	}
	b.WriteString("\n")
}

// codeBlock fences text with a fence longer than any backtick run inside it,
// so a log that contains ``` cannot end the block early.
func codeBlock(s string) string {
	fence := "```"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	return fence + "text\n" + strings.TrimRight(s, "\n") + "\n" + fence + "\n"
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return strings.Join(lines, "\n") + "\n"
}

func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
