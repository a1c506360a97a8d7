package placement

import (
	"fmt"
	"strings"
)

// Verdict is the outcome of one matrix cell.
type Verdict string

const (
	// VerdictOK: present and healthy where it must or may run.
	VerdictOK Verdict = "ok"
	// VerdictAbsent: not running where it must not or need not run.
	VerdictAbsent Verdict = "absent"
	// VerdictMissing: no pod where at least one must run.
	VerdictMissing Verdict = "missing"
	// VerdictNotReady: pods present but failing the readiness rules.
	VerdictNotReady Verdict = "not ready"
	// VerdictUnexpected: pods where none may run, or a controlPlaneOnly pod on another node.
	VerdictUnexpected Verdict = "unexpected"
	// VerdictNotEvaluated: the cell's role was not checked in this run.
	VerdictNotEvaluated Verdict = "not evaluated"
)

// Deviation reports whether the verdict fails the check.
func (v Verdict) Deviation() bool {
	return v == VerdictMissing || v == VerdictNotReady || v == VerdictUnexpected
}

// Symbol is the one-character cell mark used in rendered matrices.
func (v Verdict) Symbol() string {
	switch v {
	case VerdictOK, VerdictAbsent:
		return "✓"
	case VerdictMissing, VerdictNotReady:
		return "✗"
	case VerdictUnexpected:
		return "!"
	default:
		return "–"
	}
}

// Report is the evaluation of one cluster against a matrix for one role.
type Report struct {
	Matrix  string
	Role    Role
	Cluster string
	// Results has one entry per matrix row, in matrix order.
	Results []Result
	// Unmatched are pods in the matrix's namespaces that no row describes:
	// not a failure, but the hint that a component was renamed or added.
	Unmatched []PodRef
	// Nodes and Pods count what was evaluated.
	Nodes, Pods int
}

// Result is one row of a report.
type Result struct {
	Component   string
	Namespaces  []string
	Expectation Expectation
	Verdict     Verdict
	// Pods are the pods that matched the row.
	Pods []PodState
	// Detail says why the verdict is what it is, in one line.
	Detail string
}

// PodRef names a pod and where it runs.
type PodRef struct {
	Namespace, Name, Node string
}

// PodState is what the report needs to know about one matched pod.
type PodState struct {
	PodRef
	// NodeRole is "control-plane", "worker", "unknown node" or "" when not scheduled.
	NodeRole string
	Phase    string
	Ready    bool
	Restarts int32
	// Reason is the most telling container or pod reason: CrashLoopBackOff,
	// ImagePullBackOff, "Error (exit 1)", Evicted, ...
	Reason  string
	Message string
	// Problems say what is wrong with this pod; empty when it is fine.
	Problems []string
	// Logs are the last lines of the failing containers, when fetched.
	Logs []ContainerLog
}

// ContainerLog holds the tail of one container's log.
type ContainerLog struct {
	Container string
	// Previous is set when the log is from the last terminated run (a crashloop).
	Previous bool
	Lines    string
	// Err says why the log could not be read.
	Err string
}

// Failed reports whether any row deviates.
func (r *Report) Failed() bool {
	return len(r.Deviations()) > 0
}

// Deviations returns the rows that fail the check.
func (r *Report) Deviations() []Result {
	var out []Result
	for _, res := range r.Results {
		if res.Verdict.Deviation() {
			out = append(out, res)
		}
	}
	return out
}

// Summary is a one-line state, used for progress lines and timeouts.
func (r *Report) Summary() string {
	devs := r.Deviations()
	if len(devs) == 0 {
		return fmt.Sprintf("%d components as expected (%d pods on %d nodes)", len(r.Results), r.Pods, r.Nodes)
	}
	parts := make([]string, 0, len(devs))
	for _, d := range devs {
		parts = append(parts, d.Component+" "+string(d.Verdict))
	}
	return fmt.Sprintf("%d/%d components deviate: %s", len(devs), len(r.Results), strings.Join(parts, ", "))
}

// title names the cluster in headings and error messages.
func (r *Report) title() string {
	if r.Cluster == "" {
		return string(r.Role) + " cluster"
	}
	return fmt.Sprintf("%s cluster %q", r.Role, r.Cluster)
}
