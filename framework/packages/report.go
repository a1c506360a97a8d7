package packages

import (
	"fmt"
	"strings"
	"time"

	pkgv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/tkg-e2e/harness/framework/assert"
)

// Result is the verdict for one expected PackageInstall.
type Result struct {
	Expected Expected
	// Verdict is one of assert.OK, Absent (an optional PackageInstall that
	// does not exist), SkippedVerdict (reason in Problem), Missing, Failed,
	// NotReconciled, Mismatch or Error.
	Verdict assert.Verdict
	State   State
	// Problem says in one line why the verdict is not ok.
	Problem string
}

// Report is one cluster's package check: the packages check's assert.Report.
type Report struct {
	Cluster string
	Role    string
	Results []Result
	// ClusterBootstrap is set by CheckClusterBootstrap.
	ClusterBootstrap *BootstrapResult
}

// Failed reports whether any PackageInstall (or the ClusterBootstrap mirror) fails.
func (r *Report) Failed() bool {
	for _, res := range r.Results {
		if res.Verdict.Failing() {
			return true
		}
	}
	return r.ClusterBootstrap != nil && r.ClusterBootstrap.Failed()
}

// Rows are the PackageInstalls in the engine's shape, then the
// ClusterBootstrap mirror when it was checked or skipped.
func (r *Report) Rows() []assert.Row {
	var rows []assert.Row
	for _, res := range r.Results {
		rows = append(rows, assert.Row{Name: res.Expected.Namespace + "/" + res.Expected.Name, Verdict: res.Verdict, Detail: res.Problem,
			Stuck: res.stuck()})
	}
	if cb := r.ClusterBootstrap; cb != nil {
		row := assert.Row{Name: "ClusterBootstrap " + cb.Namespace + "/" + cb.Name, Verdict: assert.OK, Detail: "mirrors the PackageInstalls"}
		switch {
		case cb.Skipped:
			row.Verdict, row.Detail = assert.SkippedVerdict, cb.SkipReason
		case len(cb.Mismatches) > 0:
			row.Verdict, row.Detail = assert.Mismatch, strings.Join(cb.Mismatches, "; ")
		}
		rows = append(rows, row)
	}
	return rows
}

// Summary is one line: how many reconciled and which did not, with the cause.
func (r *Report) Summary() string {
	ok := 0
	var bad []string
	for _, res := range r.Results {
		if res.Verdict.Failing() {
			bad = append(bad, fmt.Sprintf("%s/%s %s (%s)", res.Expected.Namespace, res.Expected.Name, res.Verdict, assert.Shorten(res.Problem, 160)))
		} else if res.Verdict == assert.OK {
			ok++
		}
	}
	s := fmt.Sprintf("%d/%d PackageInstalls ReconcileSucceeded", ok, len(r.Results))
	if len(bad) > 0 {
		s += "; " + strings.Join(bad, "; ")
	}
	return s
}

// Failure is the whole report in Markdown under a headline.
func (r *Report) Failure(waited time.Duration) string {
	return fmt.Sprintf("packages on the %s cluster %s did not reconcile within %s: %s\n\n%s",
		r.Role, r.Cluster, waited.Round(time.Second), r.Summary(), r.Markdown())
}

// judge turns what was read into a verdict. It is pure so that every state
// kapp-controller can report is unit-tested.
func judge(e Expected, p *pkgv1alpha1.PackageInstall, getErr error) Result {
	res := Result{Expected: e}
	switch {
	case apierrors.IsNotFound(getErr):
		res.State = State{Phase: PhaseMissing}
		if e.Optional {
			res.Verdict, res.Problem = assert.Absent, "not installed (optional)"
		} else {
			res.Verdict, res.Problem = assert.Missing, fmt.Sprintf("PackageInstall %s/%s does not exist on the %s cluster", e.Namespace, e.Name, e.location())
		}
		return res
	case meta.IsNoMatchError(getErr):
		res.Verdict = assert.Error
		res.Problem = "the PackageInstall API (packaging.carvel.dev/v1alpha1) is not served: is kapp-controller installed?"
		return res
	case getErr != nil:
		res.Verdict, res.Problem = assert.Error, getErr.Error()
		return res
	}
	st := Interpret(p)
	res.State = st
	switch st.Phase {
	case PhaseSucceeded:
		if e.PackageRef != "" && st.PackageRef != e.PackageRef {
			res.Verdict, res.Problem = assert.Mismatch, fmt.Sprintf("installs package %q, want %q", st.PackageRef, e.PackageRef)
		} else if msg := versionProblem(st.Version, e.Version); msg != "" {
			res.Verdict, res.Problem = assert.Mismatch, msg
		} else {
			res.Verdict = assert.OK
		}
	case PhaseFailed, PhaseDeleteFailed:
		res.Verdict, res.Problem = assert.Failed, st.Message
	default:
		res.Verdict, res.Problem = assert.NotReconciled, fmt.Sprintf("%s: %s", st.Phase, st.Message)
	}
	return res
}
