package report

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/onsi/ginkgo/v2/reporters"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/tkg-e2e/harness/framework/artifacts"
	"github.com/tkg-e2e/harness/framework/run"
)

// JUnitFile is the JUnit report's name in the artifacts root.
const JUnitFile = "junit.xml"

// WriteJUnit writes junit.xml from a Ginkgo report, through the Writer.
// Ginkgo's --junit-report writes its file directly, unredacted, and not at
// all when the flag was not passed; call this from ReportAfterSuite (it runs
// after a failed BeforeSuite too) so the file always exists and carries no
// secret. Ginkgo's generator only writes to a path, so it writes to a
// temporary file outside the artifacts folder, which is then copied in.
func WriteJUnit(w *artifacts.Writer, r types.Report) error {
	tmp, err := os.MkdirTemp("", "harness-junit-")
	if err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	defer os.RemoveAll(tmp)
	p := filepath.Join(tmp, JUnitFile)
	if err := reporters.GenerateJUnitReport(r, p); err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	return w.WriteFile(JUnitFile, b)
}

// SyntheticSuite builds a Ginkgo report for a run that has none: a
// bootstrap that failed outside Ginkgo, or a caller that only has the run
// state. Each recorded stage is a test case; a failure that belongs to no
// stage is a failed BeforeSuite, which is where it happened from the
// suite's point of view.
func SyntheticSuite(in Input) types.Report {
	o := in.outcome()
	r := types.Report{
		SuitePath:        "github.com/tkg-e2e/harness",
		SuiteDescription: "tkg-e2e harness",
		SuiteSucceeded:   o.Verdict == VerdictPassed,
		StartTime:        o.Started,
		RunTime:          time.Duration(o.Seconds * float64(time.Second)),
	}
	if in.RunID != "" {
		r.SuiteDescription += " run " + in.RunID
	}
	if r.StartTime.IsZero() {
		r.StartTime = time.Now()
	}
	r.EndTime = r.StartTime.Add(r.RunTime)
	stageFailed := false
	if in.State != nil {
		for _, s := range in.State.Timings() {
			spec := types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: s.Stage, StartTime: s.Started,
				RunTime: time.Duration(s.Seconds * float64(time.Second)), State: types.SpecStatePassed}
			spec.EndTime = spec.StartTime.Add(spec.RunTime)
			switch s.Status {
			case run.StatusFailed, run.StatusRunning:
				spec.State = types.SpecStateFailed
				if s.Stage == o.Stage {
					spec.Failure = types.Failure{Message: o.Message}
				} else if rec, ok := in.State.Stage(s.Stage); ok {
					spec.Failure = types.Failure{Message: rec.Message}
				}
				stageFailed = true
			case run.StatusSkipped, run.StatusStopped:
				spec.State = types.SpecStateSkipped
				if rec, ok := in.State.Stage(s.Stage); ok {
					spec.Failure = types.Failure{Message: rec.Message}
				}
			}
			r.SpecReports = append(r.SpecReports, spec)
		}
	}
	if o.Verdict != VerdictPassed && o.Verdict != VerdictStopped && !stageFailed {
		msg := o.Message
		if msg == "" {
			msg = o.Why
		}
		r.SpecReports = append(r.SpecReports, types.SpecReport{LeafNodeType: types.NodeTypeBeforeSuite, State: types.SpecStateFailed,
			StartTime: r.StartTime, EndTime: r.EndTime, Failure: types.Failure{Message: msg, FailureNodeType: types.NodeTypeBeforeSuite}})
	}
	return r
}
