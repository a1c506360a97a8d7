package placement

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/tkg-e2e/harness/framework/assert"
)

// grid is the whole matrix laid out for rendering: every row × every role,
// with one column per evaluated cluster of a role, so that Markdown and HTML
// show exactly the same cells. Workloads no row describes that fail on some
// cluster follow the rows: a failure belongs in the table the reader sees
// first; healthy ones only make the hint list.
type grid struct {
	Matrix  *Matrix
	Columns []column
	Rows    []gridRow
	Reports []*Report
}

type column struct {
	Title  string
	Role   string
	Report *Report // nil: role not evaluated in this run
}

type gridRow struct {
	Name, Namespaces, MatchedBy string
	Cells                       []cell
}

type cell struct {
	Verdict     assert.Verdict
	Expectation Expectation
	Text        string // "✓ must", "! unexpected", ...
	Detail      string
}

func newGrid(m *Matrix, reports []*Report) grid {
	g := grid{Matrix: m, Reports: reports}
	for _, role := range m.Roles {
		found := false
		for _, r := range reports {
			if r != nil && r.Role == role {
				found = true
				title := role
				if r.Cluster != "" {
					title = fmt.Sprintf("%s (%s)", role, r.Cluster)
				}
				g.Columns = append(g.Columns, column{Title: title, Role: role, Report: r})
			}
		}
		if !found {
			g.Columns = append(g.Columns, column{Title: role, Role: role})
		}
	}
	for _, c := range m.Components {
		row := gridRow{Name: c.Name, Namespaces: strings.Join(c.NamespaceList(), ", "), MatchedBy: c.Match.Describe()}
		for _, col := range g.Columns {
			row.Cells = append(row.Cells, cellFor(c, col))
		}
		g.Rows = append(g.Rows, row)
	}
	for _, res := range failingUnlisted(reports) {
		row := gridRow{Name: res.Component, Namespaces: strings.Join(res.Namespaces, ", "), MatchedBy: res.Owner + " (no row)"}
		for _, col := range g.Columns {
			row.Cells = append(row.Cells, unlistedCell(res.Component, col))
		}
		g.Rows = append(g.Rows, row)
	}
	return g
}

// failingUnlisted returns the unlisted workloads that fail on any of the
// reports, once each, by name.
func failingUnlisted(reports []*Report) []Result {
	var out []Result
	for _, r := range reports {
		for _, res := range r.unlistedDeviations() {
			if !slices.ContainsFunc(out, func(o Result) bool { return o.Component == res.Component }) {
				out = append(out, res)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Component < out[j].Component })
	return out
}

func unlistedCell(name string, col column) cell {
	if col.Report == nil {
		return cell{Verdict: assert.NotEvaluated, Expectation: Unlisted, Text: assert.NotEvaluated.Symbol() + " " + string(Unlisted), Detail: "not evaluated"}
	}
	for _, res := range col.Report.Unlisted {
		if res.Component != name {
			continue
		}
		text := res.Verdict.Symbol() + " " + string(res.Verdict)
		if !res.Verdict.Failing() {
			text = res.Verdict.Symbol() + " " + string(Unlisted)
		}
		return cell{Verdict: res.Verdict, Expectation: Unlisted, Text: text, Detail: res.Detail}
	}
	return cell{Verdict: assert.Absent, Expectation: Unlisted, Text: assert.Absent.Symbol() + " " + string(assert.Absent), Detail: "no such pod on this cluster"}
}

func cellFor(c Component, col column) cell {
	exp := c.Roles[col.Role]
	if col.Report != nil {
		for _, res := range col.Report.Results {
			if res.Component != c.Name {
				continue
			}
			text := res.Verdict.Symbol() + " " + string(res.Verdict)
			if !res.Verdict.Failing() {
				text = res.Verdict.Symbol() + " " + string(exp)
			}
			return cell{Verdict: res.Verdict, Expectation: exp, Text: text, Detail: res.Detail}
		}
	}
	return cell{Verdict: assert.NotEvaluated, Expectation: exp, Text: assert.NotEvaluated.Symbol() + " " + string(exp), Detail: "not evaluated"}
}

// failedReports returns the reports with deviations.
func (g grid) failedReports() []*Report {
	var out []*Report
	for _, r := range g.Reports {
		if r != nil && r.Failed() {
			out = append(out, r)
		}
	}
	return out
}
