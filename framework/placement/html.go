package placement

import (
	"bytes"
	"html/template"
	"io"
	"os"
	"strings"
)

// HTML renders the same grid and deviations as Markdown into one
// self-contained page (inline CSS, no scripts, no external assets), so it can
// be opened from a CI artifact as is.
func HTML(m *Matrix, reports ...*Report) (string, error) {
	var b bytes.Buffer
	if err := WriteHTML(&b, m, reports...); err != nil {
		return "", err
	}
	return b.String(), nil
}

// WriteHTML writes the page to w.
func WriteHTML(w io.Writer, m *Matrix, reports ...*Report) error {
	return htmlPage.Execute(w, newGrid(m, reports))
}

// WriteHTMLFile writes the page to a file (e.g. in the run's artifacts folder).
func WriteHTMLFile(path string, m *Matrix, reports ...*Report) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := WriteHTML(f, m, reports...); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

var htmlPage = template.Must(template.New("placement").Funcs(template.FuncMap{
	"join":   strings.Join,
	"legend": func() string { return Legend },
	"class": func(v Verdict) string {
		switch {
		case v == VerdictUnexpected:
			return "unexpected"
		case v.Deviation():
			return "bad"
		case v == VerdictNotEvaluated:
			return "skip"
		default:
			return "ok"
		}
	},
	"nodeText": nodeText,
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>Placement matrix {{.Matrix.Name}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;font-size:14px}
th,td{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f0f0f0}
td.ok{background:#e6f4ea}td.bad{background:#fce8e6;font-weight:bold}
td.unexpected{background:#fff4ce;font-weight:bold}td.skip{color:#888}
pre{background:#f6f6f6;padding:6px;overflow-x:auto;font-size:12px}
.passed{color:#137333}.failed{color:#c5221f}
</style></head><body>
<h1>Placement matrix {{.Matrix.Name}}</h1>
{{with .Matrix.Description}}<p>{{.}}</p>{{end}}
<ul>{{range .Reports}}{{if .}}
<li>{{.Role}} cluster {{.Cluster}}: {{if .Failed}}<b class="failed">FAILED</b>{{else}}<b class="passed">PASSED</b>{{end}}: {{.Summary}}</li>{{end}}{{end}}
</ul>
<table>
<tr><th>Component</th><th>Namespace</th><th>Matched by</th>{{range .Columns}}<th>{{.Title}}</th>{{end}}</tr>
{{range .Rows}}<tr><td>{{.Component.Name}}</td><td>{{join .Component.NamespaceList ", "}}</td><td>{{.Component.Match.Describe}}</td>
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
