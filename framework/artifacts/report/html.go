package report

import (
	"fmt"
	"html/template"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/tkg-e2e/harness/framework/artifacts"
	"github.com/tkg-e2e/harness/framework/run"
)

// IndexFile is the page that links everything.
const IndexFile = "index.html"

type stageRow struct {
	Name, Status, Seconds string
	Left, Width           float64
}

type fileRow struct {
	Path, Href, Size string
	Cut, Errors      bool
}

type htmlData struct {
	Title, Verdict, Stage, Classification, Category string
	Message, Location, Why                          string
	Failed                                          bool
	Stages                                          []stageRow
	Placement                                       template.HTML
	PlacementFile                                   string
	Conformance                                     *ConformanceResult
	DayTwo                                          []DayTwoResult
	Summary                                         string
	Files                                           []fileRow
	Generated                                       string
}

// The page is one file with its style inline and no script, so it opens the
// same from a CI artifact browser, a downloaded zip or a file:// URL.
var page = template.Must(template.New("index").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{{.Title}}: {{.Verdict}}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1100px;padding:1em 2em;color:#222}
h1{margin:.2em 0}.verdict{display:inline-block;padding:.15em .6em;border-radius:4px;color:#fff;font-weight:bold}
.PASSED{background:#2e7d32}.FAILED{background:#c62828}
pre{background:#f5f5f5;padding:.7em;overflow-x:auto;white-space:pre-wrap;word-break:break-word}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.25em .5em;text-align:left;vertical-align:top}
.timeline{position:relative;height:1.2em;background:#eee;min-width:200px}
.bar{position:absolute;top:0;bottom:0;background:#1565c0}.bar.failed,.bar.running{background:#c62828}.bar.skipped{background:#9e9e9e}
.num{text-align:right;font-variant-numeric:tabular-nums}.cut{color:#e65100}.errors a{font-weight:bold;color:#c62828}
</style></head><body>
<h1>{{.Title}} <span class="verdict {{.Verdict}}">{{.Verdict}}</span></h1>
<p>{{if .Failed}}<b>Failing stage:</b> {{.Stage}}<br>{{end}}<b>Classification:</b> <span id="classification" data-category="{{.Category}}">{{.Classification}}</span>{{if .Why}}<br><b>Why failed:</b> {{.Why}}{{end}}</p>
{{if .Message}}<h2>Failure</h2><pre id="failure">{{.Message}}</pre>{{if .Location}}<p>at <code>{{.Location}}</code></p>{{end}}{{end}}
<h2>Stages</h2>
{{if .Stages}}<table><tr><th>Stage</th><th>Status</th><th class="num">Seconds</th><th style="width:50%">Timeline</th></tr>
{{range .Stages}}<tr><td>{{.Name}}</td><td>{{.Status}}</td><td class="num">{{.Seconds}}</td><td><div class="timeline"><div class="bar {{.Status}}" style="left:{{printf "%.2f" .Left}}%;width:{{printf "%.2f" .Width}}%"></div></div></td></tr>
{{end}}</table>{{else}}<p>No stage was recorded: the run ended before its first stage.</p>{{end}}
{{if .Placement}}<h2>Placement matrix</h2>{{if .PlacementFile}}<p><a href="{{.PlacementFile}}">{{.PlacementFile}}</a></p>{{end}}<div class="placement">{{.Placement}}</div>{{end}}
{{with .Conformance}}<h2>Conformance</h2><p id="conformance"><span class="verdict {{if .Passed}}PASSED{{else}}FAILED{{end}}">{{if .Passed}}PASSED{{else}}FAILED{{end}}</span> {{.Summary}}{{if .Report}} — <a href="{{.Report}}">{{.Report}}</a>{{end}}{{range .JUnit}} · <a href="{{.}}">{{.}}</a>{{end}}</p>{{if .FailedTests}}<ul>{{range .FailedTests}}<li>{{.}}</li>{{end}}</ul>{{end}}{{end}}
{{if .DayTwo}}<h2>Day two</h2>{{range .DayTwo}}<h3 id="daytwo-{{.Stage}}">{{.Title}}</h3>{{if .Report}}<p><a href="{{.Report}}">{{.Report}}</a></p>{{end}}{{if .Notes}}<ul>{{range .Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}{{if .Probes}}<ul>{{range .Probes}}<li>{{.}}</li>{{end}}</ul>{{end}}{{if .Events}}<ol class="events">{{range .Events}}<li>{{.}}</li>{{end}}</ol>{{end}}{{end}}{{end}}
<h2>Summary</h2><p><a href="SUMMARY.md">SUMMARY.md</a></p><pre id="summary">{{.Summary}}</pre>
<h2>Files</h2><table><tr><th>File</th><th class="num">Size</th></tr>
{{range .Files}}<tr{{if .Errors}} class="errors"{{end}}><td><a href="{{.Href}}">{{.Path}}</a>{{if .Cut}} <span class="cut">(cut by the size cap)</span>{{end}}</td><td class="num">{{.Size}}</td></tr>
{{end}}</table>
<p><small>Written {{.Generated}}. Every file passed through the harness's redaction before it was written.</small></p>
</body></html>
`))

var bodyRe = regexp.MustCompile(`(?is)<body[^>]*>(.*)</body>`)

func indexHTML(w *artifacts.Writer, in Input, o outcome, summaryText, placementRel string) ([]byte, error) {
	d := htmlData{
		Title: "Harness run", Verdict: o.Verdict, Stage: o.Stage, Classification: o.Classification.String(),
		Category: o.Classification.Category, Message: o.Message, Location: o.Location, Why: o.Why,
		Failed: o.Verdict != VerdictPassed, Summary: summaryText, Conformance: in.Conformance, DayTwo: in.DayTwo, Generated: time.Now().UTC().Format(time.RFC3339),
	}
	if in.RunID != "" {
		d.Title += " " + in.RunID
	}
	if in.State != nil {
		d.Stages = timeline(withClusters(in.State))
	}
	if placementRel != "" {
		b, err := os.ReadFile(filepath.Join(w.Root(), filepath.FromSlash(placementRel)))
		if err == nil {
			frag := string(b)
			if m := bodyRe.FindStringSubmatch(frag); m != nil {
				frag = m[1]
			}
			// The copy in the folder is already redacted; this is a second line.
			d.Placement = template.HTML(w.Redact(frag)) //nolint:gosec // written by the harness's placement stage
			d.PlacementFile = placementRel
		}
	}
	files, err := listFiles(w)
	if err != nil {
		return nil, err
	}
	d.Files = files
	var sb strings.Builder
	if err := page.Execute(&sb, d); err != nil {
		return nil, err
	}
	return []byte(sb.String()), nil
}

// withClusters is the run's stage timings with, after a stage that acted
// on several clusters side by side, a row per cluster from the stage's start.
func withClusters(st *run.State) []run.StageTiming {
	var out []run.StageTiming
	for _, s := range st.Timings() {
		out = append(out, s)
		rec, _ := st.Stage(s.Stage)
		for _, c := range rec.Clusters {
			out = append(out, run.StageTiming{Stage: s.Stage + " / " + c.ID + " " + c.Name, Status: c.Status, Started: s.Started, Seconds: c.Seconds})
		}
	}
	return out
}

func timeline(stages []run.StageTiming) []stageRow {
	if len(stages) == 0 {
		return nil
	}
	start, end := stages[0].Started, stages[0].Started
	for _, s := range stages {
		if s.Started.Before(start) {
			start = s.Started
		}
		if e := s.Started.Add(time.Duration(s.Seconds * float64(time.Second))); e.After(end) {
			end = e
		}
	}
	total := end.Sub(start).Seconds()
	if total <= 0 {
		total = 1
	}
	rows := make([]stageRow, 0, len(stages))
	for _, s := range stages {
		left := s.Started.Sub(start).Seconds() / total * 100
		width := max(s.Seconds/total*100, 0.5)
		rows = append(rows, stageRow{Name: s.Stage, Status: s.Status, Seconds: fmt.Sprintf("%.1f", s.Seconds), Left: left, Width: min(width, 100-left)})
	}
	return rows
}

// listFiles walks the folder rather than trusting the Writer's record, so
// files put there by others (Ginkgo's own reports, the run state) are linked
// too. errors.txt comes first: it is what explains missing files.
func listFiles(w *artifacts.Writer) ([]fileRow, error) {
	cut := map[string]bool{}
	for _, f := range w.Files() {
		if f.Dropped > 0 {
			cut[f.Path] = true
		}
	}
	var rows []fileRow
	err := filepath.WalkDir(w.Root(), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(w.Root(), p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == IndexFile {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		segs := strings.Split(rel, "/")
		for i := range segs {
			segs[i] = url.PathEscape(segs[i])
		}
		rows = append(rows, fileRow{Path: rel, Href: strings.Join(segs, "/"), Size: artifacts.HumanBytes(info.Size()), Cut: cut[rel], Errors: rel == artifacts.ErrorsFile})
		return nil
	})
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].Errors != rows[j].Errors {
			return rows[i].Errors
		}
		return rows[i].Path < rows[j].Path
	})
	return rows, err
}
