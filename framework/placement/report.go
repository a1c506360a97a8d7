package placement

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tkg-e2e/harness/framework/assert"
)

// Report is the evaluation of one cluster against a matrix for one role.
// It is the placement check's assert.Report.
type Report struct {
	Matrix  string
	Role    string
	Cluster string
	// Results has one entry per matrix row, in matrix order.
	Results []Result
	// Unlisted has one entry per workload of a system namespace
	// (Matrix.SystemNamespaceList) that no row describes, sorted by name:
	// its pods are held to defaults.readiness, so a crashlooping add-on the
	// matrix does not know fails the check like a row.
	Unlisted []Result
	// Unmatched are the pods of the healthy Unlisted entries: not a
	// failure, but the hint that a component was renamed or added.
	Unmatched []PodRef
	// Nodes and Pods count what was evaluated.
	Nodes, Pods int
	// OnGoneNodes are pods bound to a node that no longer exists, left
	// out (the pod garbage collector deletes them).
	OnGoneNodes []PodRef

	// matrix renders the failure message.
	matrix *Matrix
}

// Result is one row of a report.
type Result struct {
	Component   string
	Namespaces  []string
	Expectation Expectation
	// Verdict is one of assert.OK, Absent, Missing, NotReady, Unexpected.
	Verdict assert.Verdict
	// Owner names the workload of an Unlisted entry ("DaemonSet crashy"),
	// where a row would say how it matches; empty for rows.
	Owner string
	// Pods are the pods that matched the row (of an Unlisted entry: the
	// workload's pods).
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
	// Stuck is why the pod cannot become ready in the time left
	// (kube.PodStuck: an image that cannot be pulled, no node that can take
	// it), or "".
	Stuck string
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

// Deviations returns the rows that fail the check, then the failing
// Unlisted entries.
func (r *Report) Deviations() []Result {
	var out []Result
	for _, res := range slices.Concat(r.Results, r.Unlisted) {
		if res.Verdict.Failing() {
			out = append(out, res)
		}
	}
	return out
}

// Rows are the matrix rows in the engine's shape, then the failing unlisted
// workloads, then the unmatched pods as warnings.
func (r *Report) Rows() []assert.Row {
	rows := make([]assert.Row, 0, len(r.Results)+len(r.Unlisted)+len(r.Unmatched))
	for _, res := range r.Results {
		rows = append(rows, assert.Row{Name: res.Component, Verdict: res.Verdict, Detail: res.Detail, Stuck: res.stuck()})
	}
	for _, res := range r.unlistedDeviations() {
		rows = append(rows, assert.Row{Name: res.Component, Verdict: res.Verdict, Detail: res.Detail, Stuck: res.stuck()})
	}
	for _, p := range r.Unmatched {
		rows = append(rows, assert.Row{Name: p.Namespace + "/" + p.Name, Verdict: assert.Unlisted,
			Detail: "in a system namespace on " + assert.Or(p.Node, "–") + ", healthy, but no row describes it (not a failure)"})
	}
	return rows
}

// Summary is a one-line state, used for progress lines and timeouts.
func (r *Report) Summary() string {
	devs := r.Deviations()
	if len(devs) == 0 {
		unlisted := ""
		if len(r.Unlisted) > 0 {
			unlisted = fmt.Sprintf(", %d workload(s) without a row healthy", len(r.Unlisted))
		}
		if n := len(r.OnGoneNodes); n > 0 {
			unlisted += fmt.Sprintf("; %d pod(s) of nodes that are gone left out", n)
		}
		return fmt.Sprintf("%d components as expected%s (%d pods on %d nodes)", len(r.Results), unlisted, r.Pods, r.Nodes)
	}
	parts := make([]string, 0, len(devs))
	for _, d := range devs {
		parts = append(parts, d.Component+" "+string(d.Verdict))
	}
	return fmt.Sprintf("%d/%d components deviate: %s", len(devs), len(r.Results)+len(r.Unlisted), strings.Join(parts, ", "))
}

// unlistedDeviations returns the failing Unlisted entries.
func (r *Report) unlistedDeviations() []Result {
	if r == nil {
		return nil
	}
	var out []Result
	for _, res := range r.Unlisted {
		if res.Verdict.Failing() {
			out = append(out, res)
		}
	}
	return out
}

// notReady returns the failing-readiness entries, rows and unlisted alike,
// for the logs to be attached to their pods.
func (r *Report) notReady() []*Result {
	var out []*Result
	for _, results := range [][]Result{r.Results, r.Unlisted} {
		for i := range results {
			if results[i].Verdict == assert.NotReady {
				out = append(out, &results[i])
			}
		}
	}
	return out
}

// Failure carries the whole rendered matrix and every deviation, so one
// failure message shows all of it.
func (r *Report) Failure(waited time.Duration) string {
	return fmt.Sprintf("placement check of the %s failed after %s: %s\n\n%s",
		r.title(), waited.Round(time.Second), r.Summary(), Markdown(r.matrix, r))
}

// title names the cluster in headings and error messages.
func (r *Report) title() string {
	return assert.Target{Role: r.Role, Name: r.Cluster}.Title()
}

// stuck is why a row failing readiness cannot pass in the time left: the
// first of its pods that cannot become ready, named with the row.
func (res Result) stuck() string {
	if res.Verdict != assert.NotReady {
		return ""
	}
	for _, p := range res.Pods {
		if p.Stuck != "" && len(p.Problems) > 0 {
			return fmt.Sprintf("%s; placement row %s", p.Stuck, res.Component)
		}
	}
	return ""
}
