// Package report writes the files a person opens first after a run:
// SUMMARY.md (verdict, failing stage, a one-line classification of the
// failure, condition trees, not-ready pods with log tails, failed packages,
// machines without nodes), timings.json, index.html (one page linking every
// file) and junit.xml. All of them are written whatever happened before: a
// run whose BeforeSuite failed, or a bootstrap that could not start, has no
// clusters and no stages, only an error, and still gets a summary that says
// so.
package report

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/tkg-e2e/harness/framework/artifacts"
	"github.com/tkg-e2e/harness/framework/run"
)

// Input is everything the reports are made from. Every field is optional:
// the zero Input describes a run of which nothing is known, and is reported
// as failed for that reason.
type Input struct {
	RunID   string
	Profile string
	// State is the run state; nil when the run failed before creating it.
	State *run.State
	// Failure is the error that ended the run, when the caller has one (the
	// BeforeSuite error, a bootstrap that cannot start). With a Ginkgo report
	// it may stay nil: failed specs are read from Suite.
	Failure *Failure
	// Suite is Ginkgo's report (ReportAfterSuite); nil outside Ginkgo.
	Suite *types.Report
	// Clusters are the findings of the cluster collectors, if any ran.
	Clusters []artifacts.ClusterFindings
	// VSphere is the finding of the vSphere collector, if it ran.
	VSphere *artifacts.VSphereFindings
	// PlacementMatrixHTML is a file holding the placement matrix as HTML; it
	// is embedded in index.html and copied next to it. Empty: no matrix.
	PlacementMatrixHTML string
	// Conformance is the conformance stage's result, when it ran.
	Conformance *ConformanceResult
	// DayTwo are the day-two stages' timelines (upgrade, scale, remediate)
	// that ran, passed or not.
	DayTwo []DayTwoResult
	// StageCategory returns a stage's failure category from the stage
	// registry (false: not a stage). Nil: no stage has a category, and a
	// failure no evidence explains is the harness's.
	StageCategory func(stage string) (string, bool)
}

// ConformanceResult is what SUMMARY.md and index.html say about the conformance
// stage: its counts line, its report and JUnit files, the failed tests.
type ConformanceResult struct {
	Passed bool
	// Summary is one line: "N passed, N failed, N skipped of N conformance tests in ...".
	Summary string
	// Report is conformance.md and JUnit the JUnit files, relative to the artifacts folder.
	Report string
	JUnit  []string
	// FailedTests are the names of the failed tests.
	FailedTests []string
}

// DayTwoResult is one day-two stage's timeline for SUMMARY.md and
// index.html: each probe's outage, each Machine's replacement.
type DayTwoResult struct {
	Stage, Title string
	// Report is <stage>.md, relative to the artifacts folder.
	Report string
	// Probes are one line per outage probe ("API server /readyz: 0.0s out
	// in 0 window(s) over 146s ..."), then its windows.
	Probes []string
	// Notes are the stage's facts ("clusterctl upgrade: core cluster-api
	// v1.13.0 -> v1.14.0 in 41.2s").
	Notes []string
	// Events are the Machines' moments, "+76.1s <machine> gone (pool, version)".
	Events []string
}

// Failure is the error that ended a run.
type Failure struct {
	// Stage is the harness stage that failed ("bootstrap", "packages");
	// empty when the run failed before any stage.
	Stage string
	// Message is the error as the harness reported it.
	Message string
	// Location is file:line when known.
	Location string
}

// Verdicts.
const (
	VerdictPassed = "PASSED"
	VerdictFailed = "FAILED"
	// VerdictStopped: nothing failed, and a stage stopped at a rehearsal limit.
	VerdictStopped = "STOPPED AT REHEARSAL LIMIT"
)

// outcome is what every report states first.
type outcome struct {
	Verdict  string
	Stage    string
	Message  string
	Location string
	// Why explains a FAILED verdict that has no failure message of its own.
	Why            string
	Classification Classification
	Started        time.Time
	Seconds        float64
}

func (in Input) outcome() outcome {
	o := outcome{Verdict: VerdictFailed}
	var stages []run.StageTiming
	if in.State != nil {
		stages = in.State.Timings()
		o.Started = in.State.Started
	}
	if in.Suite != nil {
		if o.Started.IsZero() {
			o.Started = in.Suite.StartTime
		}
		o.Seconds = in.Suite.RunTime.Seconds()
	}
	if o.Seconds == 0 && !o.Started.IsZero() {
		o.Seconds = time.Since(o.Started).Round(time.Second).Seconds()
	}

	if f := in.Failure; f != nil {
		o.Stage, o.Message, o.Location = f.Stage, f.Message, f.Location
	}
	for _, s := range stages {
		if o.Stage == "" && (s.Status == run.StatusFailed || s.Status == run.StatusRunning) {
			o.Stage = s.Stage
			if rec, ok := in.State.Stage(s.Stage); ok && o.Message == "" {
				o.Message = rec.Message
				if s.Status == run.StatusRunning && o.Message == "" {
					o.Message = "the stage was still running when the report was written: the run was interrupted or timed out"
				}
			}
		}
	}
	if in.Suite != nil {
		if f := FailureFromSuite(*in.Suite); f != nil {
			if o.Stage == "" {
				o.Stage = f.Stage
			}
			if o.Message == "" {
				o.Message, o.Location = f.Message, f.Location
			}
		}
	}

	failed := in.Failure != nil || o.Message != "" || o.Stage != "" || (in.Suite != nil && !in.Suite.SuiteSucceeded)
	passedEvidence := (in.Suite != nil && in.Suite.SuiteSucceeded) || (in.Suite == nil && len(stages) > 0 && allPassed(stages))
	switch {
	case failed:
	case passedEvidence:
		o.Verdict = VerdictPassed
	default:
		o.Why = "nothing ran: no stage was recorded, no suite report was given and no error was passed in, so there is no evidence that the run passed"
	}
	if o.Verdict == VerdictPassed {
		for _, s := range stages {
			if s.Status == run.StatusStopped {
				o.Verdict, o.Stage = VerdictStopped, s.Stage
				if rec, ok := in.State.Stage(s.Stage); ok {
					o.Message = rec.Message
				}
				break
			}
		}
	}
	if o.Verdict == VerdictFailed && o.Stage == "" {
		o.Stage = "none (the run failed before any stage started)"
	}
	category := ""
	if in.StageCategory != nil {
		category, _ = in.StageCategory(o.Stage)
	}
	o.Classification = Classify(Evidence{
		Passed: o.Verdict == VerdictPassed, Stopped: o.Verdict == VerdictStopped, Stage: o.Stage, StageCategory: category, Message: o.Message,
		Clusters: in.Clusters, VSphere: in.VSphere, NothingRan: len(stages) == 0 && len(in.Clusters) == 0,
	})
	return o
}

func allPassed(stages []run.StageTiming) bool {
	for _, s := range stages {
		switch s.Status {
		case run.StatusPassed, run.StatusReused, run.StatusSkipped, run.StatusStopped:
		default:
			return false
		}
	}
	return true
}

// FailureFromSuite returns the first failure of a Ginkgo report, or nil when
// the suite passed. A failing BeforeSuite (nothing else ran) is reported with
// the stage "BeforeSuite"; a suite-level reason (interrupted, timed out)
// stands in when no spec carries a failure.
func FailureFromSuite(r types.Report) *Failure {
	specs := append(types.SpecReports(nil), r.SpecReports...)
	sort.SliceStable(specs, func(i, j int) bool { return specs[i].StartTime.Before(specs[j].StartTime) })
	for _, s := range specs {
		if !s.State.Is(types.SpecStateFailureStates) {
			continue
		}
		stage := s.LeafNodeText
		if s.LeafNodeType != types.NodeTypeIt || stage == "" {
			stage = s.LeafNodeType.String()
		}
		msg := s.Failure.Message
		if s.State == types.SpecStatePanicked && s.Failure.ForwardedPanic != "" {
			msg = strings.TrimSpace(msg + "\npanic: " + s.Failure.ForwardedPanic)
		}
		if msg == "" {
			msg = fmt.Sprintf("%s %s", s.LeafNodeType, s.State)
		}
		return &Failure{Stage: stage, Message: msg, Location: s.Failure.Location.String()}
	}
	if !r.SuiteSucceeded {
		msg := strings.Join(r.SpecialSuiteFailureReasons, "; ")
		if msg == "" {
			msg = "the suite failed without a failed spec"
		}
		return &Failure{Message: msg}
	}
	return nil
}
