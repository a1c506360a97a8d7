package health

import (
	"fmt"
	"strings"
	"time"

	"github.com/tkg-e2e/harness/framework/assert"
)

// Report is one cluster's health: the health check's assert.Report.
type Report struct {
	Role, Cluster string
	Expect        Expectation
	// What was found, for the summary of a healthy cluster.
	Nodes, ControlPlaneNodes            int
	APIServices, UnavailableAPIServices int
	Webhooks                            int
	// WebhooksAnswered answered a dry-run request (allowed or denied it).
	WebhooksAnswered int

	rows []assert.Row
}

// Rows are the node count, the nodes, the APIServices and the webhooks, in
// that order.
func (r *Report) Rows() []assert.Row { return r.rows }

// Failed reports whether any row fails; warnings do not.
func (r *Report) Failed() bool { return len(r.with(assert.Fail)) > 0 }

func (r *Report) with(s assert.Status) []assert.Row {
	var out []assert.Row
	for _, row := range r.rows {
		if row.Verdict.Status() == s {
			out = append(out, row)
		}
	}
	return out
}

// Summary is what was found on a healthy cluster, or every failing row with
// its cause shortened.
func (r *Report) Summary() string {
	bad := r.with(assert.Fail)
	warn := ""
	if n := len(r.with(assert.Warn)); n > 0 {
		warn = fmt.Sprintf("; %s (not failing)", plural(n, "warning"))
	}
	if len(bad) == 0 {
		version := ""
		if r.Expect.KubernetesVersion != "" {
			version = " at " + r.Expect.KubernetesVersion
		}
		return fmt.Sprintf("%s (%d control plane, %s) Ready%s; %d APIServices available; %s checked (%d answered a dry-run request)%s",
			plural(r.Nodes, "node"), r.ControlPlaneNodes, plural(r.Nodes-r.ControlPlaneNodes, "worker"), version,
			r.APIServices, plural(r.Webhooks, "admission webhook"), r.WebhooksAnswered, warn)
	}
	parts := make([]string, 0, len(bad))
	for _, row := range bad {
		parts = append(parts, fmt.Sprintf("%s %s (%s)", row.Name, row.Verdict, assert.Shorten(row.Detail, 160)))
	}
	return fmt.Sprintf("%s: %s%s", plural(len(bad), "problem"), strings.Join(parts, "; "), warn)
}

// Failure is a headline and every failing row's whole detail, then the
// warnings, which may be the cause of a failure elsewhere.
func (r *Report) Failure(waited time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "health check of the %s failed after %s: %s\n", r.title(), waited.Round(time.Second), plural(len(r.with(assert.Fail)), "problem"))
	for _, s := range []assert.Status{assert.Fail, assert.Warn} {
		for _, row := range r.with(s) {
			fmt.Fprintf(&b, "\n- %s %s: %s: %s", row.Verdict.Symbol(), row.Name, row.Verdict, row.Detail)
		}
	}
	return b.String()
}

func (r *Report) title() string {
	return assert.Target{Role: r.Role, Name: r.Cluster}.Title()
}
