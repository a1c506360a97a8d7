package assert

import "fmt"

// Status is what a row means for the run.
type Status string

const (
	Pass Status = "pass"
	Fail Status = "fail"
	// Warn does not fail the run but deserves a look.
	Warn Status = "warn"
	// Skipped: not checked, with the reason in the row's Detail. Never a pass.
	Skipped Status = "skipped"
)

// Verdict is the outcome of one row of one check on one cluster. The words
// are the checks' own (what a reader of a placement or package report
// expects); verdicts maps each to one Status and one mark, so every report
// marks the same outcome the same way.
type Verdict string

// Verdicts of the placement matrix, the package check and the health check.
const (
	// OK: present and healthy where it must or may be.
	OK Verdict = "ok"
	// Absent: not there where it must not or need not be.
	Absent Verdict = "absent"
	// Missing: not there where it must be.
	Missing Verdict = "missing"
	// NotReady: there, failing the readiness rules.
	NotReady Verdict = "not ready"
	// Unexpected: there where it must not be (or off the control plane).
	Unexpected Verdict = "unexpected"
	// Failed: ReconcileFailed (or DeleteFailed) at the deadline.
	Failed Verdict = "failed"
	// NotReconciled: still Reconciling or Pending at the deadline.
	NotReconciled Verdict = "not reconciled"
	// Mismatch: reconciled, but not the package or version expected.
	Mismatch Verdict = "mismatch"
	// Error: the object could not be read.
	Error Verdict = "error"
	// SkippedVerdict: this row was not checked; the row says why.
	SkippedVerdict Verdict = "skipped"
	// NotEvaluated: a role column of the file that no cluster of the run has.
	NotEvaluated Verdict = "not evaluated"
	// Unlisted: there, and described by no row of the file (a renamed or new
	// component): not a failure, the hint that the file needs a row.
	Unlisted Verdict = "unlisted"
	// Degraded: broken in a way the cluster tolerates by design (a webhook
	// with failurePolicy Ignore and no endpoint lets requests through
	// unchecked): not a failure, but what a reader must see.
	Degraded Verdict = "degraded"
)

var verdicts = map[Verdict]struct {
	status Status
	mark   string
}{
	OK: {Pass, "✓"}, Absent: {Pass, "✓"},
	Missing: {Fail, "✗"}, NotReady: {Fail, "✗"}, Failed: {Fail, "✗"}, NotReconciled: {Fail, "✗"},
	Mismatch: {Fail, "✗"}, Error: {Fail, "✗"},
	// "!" sets what should not be there apart from what is missing or broken.
	Unexpected:     {Fail, "!"},
	Unlisted:       {Warn, "!"},
	Degraded:       {Warn, "!"},
	SkippedVerdict: {Skipped, "–"}, NotEvaluated: {Skipped, "–"},
}

// Status maps the verdict to what it means for the run. An unknown verdict
// fails: a check that invents a word must not pass silently.
func (v Verdict) Status() Status {
	if x, ok := verdicts[v]; ok {
		return x.status
	}
	return Fail
}

// Failing reports whether the verdict fails the check.
func (v Verdict) Failing() bool { return v.Status() == Fail }

// Symbol is the one-character mark of rendered reports: ✓ ✗ ! –.
func (v Verdict) Symbol() string {
	if x, ok := verdicts[v]; ok {
		return x.mark
	}
	return "✗"
}

// Row is one row of one check on one cluster, in the shape every check
// shares: what was checked, the verdict, and in one line why (the reason, for
// a skip).
type Row struct {
	Name    string
	Verdict Verdict
	Detail  string
	// Stuck, on a failing row, is why it cannot pass in the time left (a
	// webhook that refuses, an image no registry serves): the cause a
	// wait ends with after its grace. Empty while the row may still heal.
	Stuck string
}

// StuckCause is the first failing row's Stuck cause, or "": one row that
// cannot pass is enough to know the whole report cannot.
func StuckCause(rows []Row) string {
	for _, r := range rows {
		if r.Stuck != "" && r.Verdict.Status() == Fail {
			return r.Stuck
		}
	}
	return ""
}

// Counts are the rows of one report by status.
type Counts map[Status]int

// Count tallies rows by status.
func Count(rows []Row) Counts {
	c := Counts{}
	for _, r := range rows {
		c[r.Verdict.Status()]++
	}
	return c
}

// String is "3 pass, 1 fail, 0 warn, 1 skipped".
func (c Counts) String() string {
	return fmt.Sprintf("%d pass, %d fail, %d warn, %d skipped", c[Pass], c[Fail], c[Warn], c[Skipped])
}
