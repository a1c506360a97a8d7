package health

import (
	"fmt"
	"strings"

	"github.com/tkg-e2e/harness/framework/assert"
)

// Markdown renders the report: the expectation, then every row, so a
// passing report still records what a healthy cluster looked like.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Health of the %s: %s\n\n%s\n\n", r.title(), assert.Passed(r.Failed()), r.Summary())
	fmt.Fprintf(&b, "Expected: %d control plane + %d worker nodes, Kubernetes %s.\n\n",
		r.Expect.ControlPlaneNodes, r.Expect.WorkerNodes, assert.Or(r.Expect.KubernetesVersion, "(any version)"))
	var rows [][]string
	for _, row := range r.rows {
		rows = append(rows, []string{row.Name, row.Verdict.Symbol() + " " + string(row.Verdict), row.Detail})
	}
	b.WriteString(assert.MarkdownTable([]string{"Checked", "Verdict", "Detail"}, rows))
	return b.String()
}
