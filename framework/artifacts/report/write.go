package report

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/tkg-e2e/harness/framework/artifacts"
	"github.com/tkg-e2e/harness/framework/run"
)

// Names of the other files Write produces.
const (
	TimingsFile   = "timings.json"
	PlacementFile = "placement.html"
)

// Result says what Write concluded, for the caller's own log line.
type Result struct {
	Verdict        string
	Stage          string
	Classification Classification
}

// Write writes timings.json, SUMMARY.md, junit.xml, errors.txt and
// index.json, and last index.html (so it links all of them). A file that
// fails does not stop the others; the errors are joined.
//
// junit.xml comes from in.Suite when given, else from SyntheticSuite(in).
// With a Ginkgo suite, prefer calling Write from ReportAfterSuite over
// passing --junit-report into the artifacts folder: Ginkgo's file would
// replace this one, unredacted.
func Write(w *artifacts.Writer, in Input) (Result, error) {
	if w == nil {
		return Result{}, errors.New("report: Writer is nil")
	}
	o := in.outcome()
	var errs []error
	if err := writeTimings(w, in, o); err != nil {
		errs = append(errs, err)
	}
	placementRel := ""
	if in.PlacementMatrixHTML != "" {
		if err := w.CopyFile(PlacementFile, in.PlacementMatrixHTML); err != nil {
			errs = append(errs, fmt.Errorf("placement matrix: %w", err))
		} else {
			placementRel = PlacementFile
		}
	}
	suite := SyntheticSuite(in)
	if in.Suite != nil {
		suite = *in.Suite
	}
	if err := WriteJUnit(w, suite); err != nil {
		errs = append(errs, err)
	}
	// errors.txt first, so the summary counts what the reports themselves
	// could not write, then again after, to list the summary's own fate.
	if err := w.WriteIndex(); err != nil {
		errs = append(errs, err)
	}
	text := w.Redact(summary(in, o, w.Items()))
	if err := w.WriteFile(SummaryFile, []byte(text)); err != nil {
		errs = append(errs, err)
	}
	if err := w.WriteIndex(); err != nil {
		errs = append(errs, err)
	}
	page, err := indexHTML(w, in, o, text, placementRel)
	if err == nil {
		err = w.WriteFile(IndexFile, page)
	}
	if err != nil {
		errs = append(errs, fmt.Errorf("index.html: %w", err))
	}
	return Result{Verdict: o.Verdict, Stage: o.Stage, Classification: o.Classification}, errors.Join(errs...)
}

// timings is the shape of timings.json.
type timings struct {
	RunID   string            `json:"runID,omitempty"`
	Verdict string            `json:"verdict"`
	Started time.Time         `json:"started,omitzero"`
	Seconds float64           `json:"seconds"`
	Stages  []run.StageTiming `json:"stages"`
	// Collection is how long each cluster's collection took.
	Collection map[string]float64 `json:"collectionSeconds,omitempty"`
	// Steps are the stages' steps timed by someone else (the tanzu CLI's
	// phases), by stage; absent when no stage recorded any.
	Steps map[string][]run.StepTiming `json:"steps,omitempty"`
}

func writeTimings(w *artifacts.Writer, in Input, o outcome) error {
	t := timings{RunID: in.RunID, Verdict: o.Verdict, Started: o.Started, Seconds: o.Seconds, Stages: []run.StageTiming{}}
	if in.State != nil {
		t.Stages = in.State.Timings()
		t.Steps = in.State.StageSteps()
	}
	for _, c := range in.Clusters {
		if t.Collection == nil {
			t.Collection = map[string]float64{}
		}
		t.Collection[strings.TrimPrefix(filepath.ToSlash(c.Folder), "clusters/")] = c.Seconds
	}
	return w.WriteJSON(TimingsFile, t)
}
