package packages

import (
	"fmt"
	"strings"

	pkgv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
)

// Verdict is the outcome for one expected PackageInstall.
type Verdict string

const (
	VerdictOK Verdict = "ok"
	// VerdictAbsent: an optional PackageInstall that does not exist.
	VerdictAbsent Verdict = "absent (optional)"
	// VerdictSkipped: not checked, with the reason in Result.Problem (never a pass).
	VerdictSkipped Verdict = "skipped"
	VerdictMissing Verdict = "missing"
	// VerdictFailed: ReconcileFailed (or DeleteFailed) at the deadline.
	VerdictFailed Verdict = "failed"
	// VerdictNotReconciled: still Reconciling or Pending at the deadline.
	VerdictNotReconciled Verdict = "not reconciled"
	// VerdictMismatch: reconciled, but not the package or version expected.
	VerdictMismatch Verdict = "mismatch"
	// VerdictError: the PackageInstall could not be read.
	VerdictError Verdict = "error"
)

// Failing reports whether the verdict fails the check.
func (v Verdict) Failing() bool {
	switch v {
	case VerdictOK, VerdictAbsent, VerdictSkipped:
		return false
	}
	return true
}

// Result is the verdict for one expected PackageInstall.
type Result struct {
	Expected Expected
	Verdict  Verdict
	State    State
	// Problem says in one line why the verdict is not ok.
	Problem string
}

// Report is the outcome of one package check.
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

// Summary is one line: how many reconciled and which did not, with the cause.
func (r *Report) Summary() string {
	ok := 0
	var bad []string
	for _, res := range r.Results {
		if res.Verdict.Failing() {
			bad = append(bad, fmt.Sprintf("%s/%s %s (%s)", res.Expected.Namespace, res.Expected.Name, res.Verdict, shorten(res.Problem, 160)))
		} else if res.Verdict == VerdictOK {
			ok++
		}
	}
	s := fmt.Sprintf("%d/%d PackageInstalls ReconcileSucceeded", ok, len(r.Results))
	if len(bad) > 0 {
		s += "; " + strings.Join(bad, "; ")
	}
	return s
}

// judge turns what was read into a verdict. It is pure so that every state
// kapp-controller can report is unit-tested.
func judge(e Expected, p *pkgv1alpha1.PackageInstall, getErr error) Result {
	res := Result{Expected: e}
	switch {
	case apierrors.IsNotFound(getErr):
		res.State = State{Phase: PhaseMissing}
		if e.Optional {
			res.Verdict, res.Problem = VerdictAbsent, "not installed (optional)"
		} else {
			res.Verdict, res.Problem = VerdictMissing, fmt.Sprintf("PackageInstall %s/%s does not exist on the %s cluster", e.Namespace, e.Name, e.location())
		}
		return res
	case meta.IsNoMatchError(getErr):
		res.Verdict = VerdictError
		res.Problem = "the PackageInstall API (packaging.carvel.dev/v1alpha1) is not served: is kapp-controller installed?"
		return res
	case getErr != nil:
		res.Verdict, res.Problem = VerdictError, getErr.Error()
		return res
	}
	st := Interpret(p)
	res.State = st
	switch st.Phase {
	case PhaseSucceeded:
		if e.PackageRef != "" && st.PackageRef != e.PackageRef {
			res.Verdict, res.Problem = VerdictMismatch, fmt.Sprintf("installs package %q, want %q", st.PackageRef, e.PackageRef)
		} else if msg := versionProblem(st.Version, e.Version); msg != "" {
			res.Verdict, res.Problem = VerdictMismatch, msg
		} else {
			res.Verdict = VerdictOK
		}
	case PhaseFailed, PhaseDeleteFailed:
		res.Verdict, res.Problem = VerdictFailed, st.Message
	default:
		res.Verdict, res.Problem = VerdictNotReconciled, fmt.Sprintf("%s: %s", st.Phase, st.Message)
	}
	return res
}

func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
