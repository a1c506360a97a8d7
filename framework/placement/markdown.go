package placement

import (
	"fmt"
	"strings"

	"github.com/tkg-e2e/harness/framework/assert"
)

// Legend explains the cell marks; both renderings print it.
const Legend = "✓ ok · ✗ missing / not ready · ! unexpected · – not evaluated"

// Markdown renders the whole matrix (every row × every role) with the given
// reports filled in, followed by the details of every deviation. It is what a
// failed check's error carries, so one message shows everything.
func Markdown(m *Matrix, reports ...*Report) string {
	g := newGrid(m, reports)
	var b strings.Builder
	fmt.Fprintf(&b, "## Placement matrix %s\n\n", m.Name)
	for _, r := range reports {
		if r != nil {
			fmt.Fprintf(&b, "- %s: **%s**: %s\n", r.title(), assert.Passed(r.Failed()), r.Summary())
		}
	}
	head := []string{"Component", "Namespace", "Matched by"}
	for _, col := range g.Columns {
		head = append(head, col.Title)
	}
	var rows [][]string
	for _, row := range g.Rows {
		cells := []string{row.Name, row.Namespaces, row.MatchedBy}
		for _, cl := range row.Cells {
			cells = append(cells, cl.Text)
		}
		rows = append(rows, cells)
	}
	b.WriteString("\n" + assert.MarkdownTable(head, rows))
	fmt.Fprintf(&b, "\nLegend: %s\n", Legend)

	for _, r := range g.failedReports() {
		fmt.Fprintf(&b, "\n### Deviations on the %s\n", r.title())
		for _, res := range r.Deviations() {
			fmt.Fprintf(&b, "\n#### %s %s: %s\n\n", res.Verdict.Symbol(), res.Component, res.Verdict)
			fmt.Fprintf(&b, "- expected `%s` in %s: %s\n", res.Expectation, strings.Join(res.Namespaces, " or "), res.Detail)
			for _, p := range res.Pods {
				writePodMarkdown(&b, p)
			}
		}
	}
	for _, r := range reports {
		if r == nil || len(r.Unmatched) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n<details><summary>%d pod(s) on the %s that no row describes (not a failure)</summary>\n\n", len(r.Unmatched), r.title())
		for _, p := range r.Unmatched {
			fmt.Fprintf(&b, "- `%s/%s` on %s\n", p.Namespace, p.Name, assert.Or(p.Node, "–"))
		}
		b.WriteString("\n</details>\n")
	}
	return b.String()
}

func writePodMarkdown(b *strings.Builder, p PodState) {
	ready := "not ready"
	if p.Ready {
		ready = "ready"
	}
	fmt.Fprintf(b, "- pod `%s/%s` on %s: phase %s, %s, %d restart(s)", p.Namespace, p.Name, nodeText(p), assert.Or(p.Phase, "–"), ready, p.Restarts)
	if p.Reason != "" {
		fmt.Fprintf(b, ", reason %s", p.Reason)
	}
	if p.Message != "" {
		fmt.Fprintf(b, ": %s", assert.OneLine(p.Message))
	}
	b.WriteString("\n")
	for _, prob := range p.Problems {
		fmt.Fprintf(b, "  - %s\n", prob)
	}
	for _, l := range p.Logs {
		run := "current run"
		if l.Previous {
			run = "previous run"
		}
		if l.Err != "" {
			fmt.Fprintf(b, "  - log of container %s (%s) unavailable: %s\n", l.Container, run, assert.OneLine(l.Err))
			continue
		}
		fmt.Fprintf(b, "  - last log lines of container %s (%s):\n\n", l.Container, run)
		assert.Fenced(b, l.Lines, "    ")
		b.WriteString("\n")
	}
}

func nodeText(p PodState) string {
	if p.Node == "" {
		return "no node (not scheduled)"
	}
	return fmt.Sprintf("node %s (%s)", p.Node, p.NodeRole)
}
