package assert

import (
	"bytes"
	"fmt"
	"html/template"
	"strings"
)

// OneLine folds whitespace (newlines included) into single spaces, for text
// quoted inside a table cell or a list item.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Cell makes s safe as one Markdown table cell.
func Cell(s string) string { return strings.ReplaceAll(OneLine(s), "|", `\|`) }

// Or returns s, or fallback when s is empty ("–" for an unknown value).
func Or(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// Shorten folds s into one line of at most n bytes, marking a cut with "…".
func Shorten(s string, n int) string {
	s = OneLine(s)
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Passed is the status word of a report heading.
func Passed(failed bool) string {
	if failed {
		return "FAILED"
	}
	return "PASSED"
}

// MarkdownTable renders a table; every cell goes through Cell.
func MarkdownTable(head []string, rows [][]string) string {
	var b strings.Builder
	line := func(cells []string, each func(string) string) {
		b.WriteString("|")
		for _, c := range cells {
			fmt.Fprintf(&b, " %s |", each(c))
		}
		b.WriteString("\n")
	}
	line(head, Cell)
	b.WriteString("|" + strings.Repeat("---|", len(head)) + "\n")
	for _, r := range rows {
		line(r, Cell)
	}
	return b.String()
}

// Fenced writes text as a fenced code block, every line indented (so it
// nests under a list item). The fence grows past any backtick run in the
// text: a quoted log must not end the block early.
func Fenced(b *strings.Builder, text, indent string) {
	fence := "```"
	for strings.Contains(text, fence) {
		fence += "`"
	}
	fmt.Fprintf(b, "%s%s\n", indent, fence)
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		fmt.Fprintf(b, "%s%s\n", indent, line)
	}
	fmt.Fprintf(b, "%s%s\n", indent, fence)
}

// CellClass is the CSS class of a verdict's cell in the HTML pages (Style
// colours them): ok, bad, unexpected, warn or skip.
func CellClass(v Verdict) string {
	switch {
	case v == Unexpected:
		return "unexpected"
	case v.Status() == Fail:
		return "bad"
	case v.Status() == Warn:
		return "warn"
	case v.Status() == Skipped:
		return "skip"
	}
	return "ok"
}

// Style is the inline CSS of every HTML page the checks write: pages are
// opened from a CI artifact as is, so they carry no external asset.
const Style = `body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;font-size:14px}
th,td{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f0f0f0}
td.ok{background:#e6f4ea}td.bad{background:#fce8e6;font-weight:bold}
td.unexpected,td.warn{background:#fff4ce;font-weight:bold}td.skip{color:#888}
pre{background:#f6f6f6;padding:6px;overflow-x:auto;font-size:12px}
.passed{color:#137333}.failed{color:#c5221f}`

// Funcs are the template functions the HTML pages share.
var Funcs = template.FuncMap{
	"join":   strings.Join,
	"class":  CellClass,
	"style":  func() template.CSS { return Style },
	"passed": Passed,
}

type pageTarget struct {
	Target Target
	Report Report
}

var genericPage = template.Must(template.New("check").Funcs(Funcs).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{{.Title}}</title>
<style>{{style}}</style></head><body>
<h1>{{.Title}}</h1>
{{range .Targets}}<h2>{{.Target.Title}}: <b class="{{if .Report.Failed}}failed{{else}}passed{{end}}">{{passed .Report.Failed}}</b></h2>
<p>{{.Report.Summary}}</p>
<table>
<tr><th>Checked</th><th>Verdict</th><th>Detail</th></tr>
{{range .Report.Rows}}<tr><td>{{.Name}}</td><td class="{{class .Verdict}}">{{.Verdict.Symbol}} {{.Verdict}}</td><td>{{.Detail}}</td></tr>
{{end}}</table>
{{end}}</body></html>
`))

// HTMLPage renders the rows of every report as one self-contained page, for
// a check that has no page of its own.
func HTMLPage(check string, targets []Target, reports []Report) (string, error) {
	data := struct {
		Title   string
		Targets []pageTarget
	}{Title: check + " check"}
	for i, r := range reports {
		data.Targets = append(data.Targets, pageTarget{Target: targets[i], Report: r})
	}
	var b bytes.Buffer
	if err := genericPage.Execute(&b, data); err != nil {
		return "", fmt.Errorf("%s: HTML page: %w", check, err)
	}
	return b.String(), nil
}

// JoinMarkdown renders a check's per-cluster reports one after the other:
// the Render of a check whose reports render themselves and whose HTML page
// is the engine's generic rows page.
func JoinMarkdown(check string, reports []Report) (string, string, error) {
	parts := make([]string, 0, len(reports))
	for _, r := range reports {
		m, ok := r.(interface{ Markdown() string })
		if !ok {
			return "", "", fmt.Errorf("%s: cannot render a %T", check, r)
		}
		parts = append(parts, m.Markdown())
	}
	return strings.Join(parts, "\n\n"), "", nil
}
