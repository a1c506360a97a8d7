package packages

import (
	"fmt"

	"github.com/Masterminds/semver/v3"
	kcv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	pkgv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	corev1 "k8s.io/api/core/v1"
)

// Phase is where a PackageInstall stands, read from its status. Most phases
// are kapp-controller's condition types, named as it names them, so a report
// and `kubectl get pkgi` say the same word; Pending and Missing are the
// harness's words for a status with no (current) condition and for no object.
type Phase string

const (
	PhaseSucceeded    = Phase(kcv1alpha1.ReconcileSucceeded)
	PhaseFailed       = Phase(kcv1alpha1.ReconcileFailed)
	PhaseReconciling  = Phase(kcv1alpha1.Reconciling)
	PhaseDeleting     = Phase(kcv1alpha1.Deleting)
	PhaseDeleteFailed = Phase(kcv1alpha1.DeleteFailed)
	// PhasePending: no condition yet, or the status describes an older generation.
	PhasePending Phase = "Pending"
	// PhaseMissing: no such PackageInstall.
	PhaseMissing Phase = "Missing"
)

// State is what a report needs to know about one PackageInstall.
type State struct {
	Phase Phase
	// PackageRef and VersionSelection are what the spec asks for.
	PackageRef       string
	VersionSelection string
	// Version is the resolved version; LastAttemptedVersion the one last tried.
	Version              string
	LastAttemptedVersion string
	Conditions           []kcv1alpha1.Condition
	UsefulErrorMessage   string
	FriendlyDescription  string
	Generation           int64
	ObservedGeneration   int64
	Paused, Canceled     bool
	// Message is the cause to show: usefulErrorMessage when kapp-controller
	// filled it (ytt, schema and kapp errors), else the condition message, which
	// is the only place the cause of a missing package version appears.
	Message string
}

// Interpret reads a PackageInstall's status. ReconcileFailed is not final
// (a package applied before its repository, or fetched before cluster DNS,
// fails first and succeeds seconds later), so a caller polls on Failed too.
func Interpret(p *pkgv1alpha1.PackageInstall) State {
	st := State{
		Version:              p.Status.Version,
		LastAttemptedVersion: p.Status.LastAttemptedVersion,
		Conditions:           p.Status.Conditions,
		UsefulErrorMessage:   p.Status.UsefulErrorMessage,
		FriendlyDescription:  p.Status.FriendlyDescription,
		Generation:           p.Generation,
		ObservedGeneration:   p.Status.ObservedGeneration,
		Paused:               p.Spec.Paused,
		Canceled:             p.Spec.Canceled,
	}
	if ref := p.Spec.PackageRef; ref != nil {
		st.PackageRef = ref.RefName
		if ref.VersionSelection != nil {
			st.VersionSelection = ref.VersionSelection.Constraints
		}
	}
	isTrue := func(t kcv1alpha1.ConditionType) (kcv1alpha1.Condition, bool) {
		for _, c := range p.Status.Conditions {
			if c.Type == t && c.Status == corev1.ConditionTrue {
				return c, true
			}
		}
		return kcv1alpha1.Condition{}, false
	}
	var cond kcv1alpha1.Condition
	var ok bool
	switch {
	case p.DeletionTimestamp != nil:
		st.Phase = PhaseDeleting
		if cond, ok = isTrue(kcv1alpha1.DeleteFailed); ok {
			st.Phase = PhaseDeleteFailed
		}
	case p.Status.ObservedGeneration < p.Generation:
		st.Phase = PhasePending
		st.Message = fmt.Sprintf("status describes generation %d, spec is at generation %d", p.Status.ObservedGeneration, p.Generation)
	default:
		if cond, ok = isTrue(kcv1alpha1.ReconcileSucceeded); ok {
			st.Phase = PhaseSucceeded
		} else if cond, ok = isTrue(kcv1alpha1.ReconcileFailed); ok {
			st.Phase = PhaseFailed
		} else if cond, ok = isTrue(kcv1alpha1.Reconciling); ok {
			st.Phase = PhaseReconciling
		} else {
			st.Phase = PhasePending
			st.Message = "no condition yet (kapp-controller has not picked it up)"
		}
	}
	switch {
	case st.Message != "":
		// Already explained (stale generation, no condition yet).
	case st.UsefulErrorMessage != "" && st.Phase != PhaseSucceeded:
		st.Message = st.UsefulErrorMessage
	case cond.Message != "":
		st.Message = cond.Message
	case st.Phase != PhaseSucceeded:
		st.Message = st.FriendlyDescription
	}
	if st.Paused || st.Canceled {
		st.Message = fmt.Sprintf("spec.paused=%v spec.canceled=%v: kapp-controller will not reconcile it; %s", st.Paused, st.Canceled, st.Message)
	}
	return st
}

// versionProblem checks the resolved version against a constraint. An empty
// version while the constraint is set means the package never resolved.
func versionProblem(version, constraint string) string {
	if constraint == "" {
		return ""
	}
	if version == "" {
		return fmt.Sprintf("no resolved version to check against %q", constraint)
	}
	c, err := semver.NewConstraint(constraint)
	if err != nil {
		return fmt.Sprintf("bad version constraint %q: %v", constraint, err)
	}
	v, err := semver.NewVersion(version)
	if err != nil {
		return fmt.Sprintf("resolved version %q is not semver: %v", version, err)
	}
	if !c.Check(v) {
		return fmt.Sprintf("resolved version %s does not satisfy %q", version, constraint)
	}
	return ""
}
