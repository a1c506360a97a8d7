package placement

import (
	"bytes"
	"html/template"
	"maps"

	"github.com/tkg-e2e/harness/framework/assert"
)

// HTML renders the same grid and deviations as Markdown into one
// self-contained page (inline CSS, no scripts, no external assets), so it can
// be opened from a CI artifact as is.
func HTML(m *Matrix, reports ...*Report) (string, error) {
	var b bytes.Buffer
	if err := htmlPage.Execute(&b, newGrid(m, reports)); err != nil {
		return "", err
	}
	return b.String(), nil
}

var htmlFuncs = func() template.FuncMap {
	f := maps.Clone(assert.Funcs)
	f["legend"] = func() string { return Legend }
	f["nodeText"] = nodeText
	return f
}()

var htmlPage = template.Must(template.New("placement").Funcs(htmlFuncs).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>Placement matrix {{.Matrix.Name}}</title>
<style>{{style}}</style></head><body>
<h1>Placement matrix {{.Matrix.Name}}</h1>
{{with .Matrix.Description}}<p>{{.}}</p>{{end}}
<ul>{{range .Reports}}{{if .}}
<li>{{.Role}} cluster {{.Cluster}}: <b class="{{if .Failed}}failed{{else}}passed{{end}}">{{passed .Failed}}</b>: {{.Summary}}</li>{{end}}{{end}}
</ul>
<table>
<tr><th>Component</th><th>Namespace</th><th>Matched by</th>{{range .Columns}}<th>{{.Title}}</th>{{end}}</tr>
{{range .Rows}}<tr><td>{{.Name}}</td><td>{{.Namespaces}}</td><td>{{.MatchedBy}}</td>
{{range .Cells}}<td class="{{class .Verdict}}" title="{{.Detail}}">{{.Text}}</td>{{end}}</tr>
{{end}}</table>
<p>Legend: {{legend}}</p>
{{range .Reports}}{{if .}}{{if .Failed}}
<h2>Deviations on the {{.Role}} cluster {{.Cluster}}</h2>
{{range .Deviations}}
<h3>{{.Verdict.Symbol}} {{.Component}}: {{.Verdict}}</h3>
<p>expected <code>{{.Expectation}}</code> in {{join .Namespaces " or "}}: {{.Detail}}</p>
<ul>{{range .Pods}}
<li>pod <code>{{.Namespace}}/{{.Name}}</code> on {{nodeText .}}: phase {{.Phase}}, {{if .Ready}}ready{{else}}not ready{{end}}, {{.Restarts}} restart(s){{with .Reason}}, reason {{.}}{{end}}{{with .Message}}: {{.}}{{end}}
{{if .Problems}}<ul>{{range .Problems}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{range .Logs}}{{if .Err}}<p>log of container {{.Container}} unavailable: {{.Err}}</p>{{else}}<p>last log lines of container {{.Container}}{{if .Previous}} (previous run){{end}}:</p><pre>{{.Lines}}</pre>{{end}}{{end}}
</li>{{end}}</ul>
{{end}}{{end}}{{end}}{{end}}
{{range .Reports}}{{if .}}{{if .Unmatched}}
<details><summary>{{len .Unmatched}} pod(s) on the {{.Role}} cluster {{.Cluster}} that no row describes (not a failure)</summary><ul>
{{range .Unmatched}}<li><code>{{.Namespace}}/{{.Name}}</code> on {{.Node}}</li>{{end}}</ul></details>{{end}}{{end}}{{end}}
</body></html>
`))
