package smoke

import (
	"fmt"
	"strings"

	"github.com/tkg-e2e/harness/framework/assert"
)

// Markdown renders the result as smoke.md: the verdict, what was proven and
// what was not, then the evidence (nodes, servers, lookups, requests, steps)
// and, for a client that failed, its log, so that the file needs no kubectl
// afterwards.
func (r *Result) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Smoke test of cluster %s: %s\n\n", r.Cluster, r.verdict())
	fmt.Fprintf(&b, "Namespace `%s`, image `%s`.\n\n", assert.Or(r.Namespace, "not created"), r.Image)
	if r.Failure != "" {
		b.WriteString("Failure:\n\n")
		assert.Fenced(&b, r.failureWithoutLogs(), "")
		b.WriteString("\n")
	}

	b.WriteString("### What was proven\n\n")
	var rows [][]string
	for _, p := range r.Proofs {
		rows = append(rows, []string{p.Claim, symbol(p.Status) + " " + string(p.Status), assert.Shorten(p.Detail, 400)})
	}
	b.WriteString(assert.MarkdownTable([]string{"Claim", "Status", "Detail"}, rows))

	b.WriteString("\n### Nodes\n\n")
	rows = nil
	for _, n := range r.Nodes {
		rows = append(rows, []string{n.Name, yesNo(n.Schedulable), assert.Or(n.Excluded, "–")})
	}
	b.WriteString(assert.MarkdownTable([]string{"Node", "Schedulable", "Left out because"}, rows))
	if len(r.Nodes) > 0 {
		// Schedulable nodes get a server; clients also run where only
		// NoSchedule taints keep ordinary workloads away (a control plane).
		fmt.Fprintf(&b, "\nClients on: %s\n", assert.Or(strings.Join(r.ClientNodes, ", "), "none"))
	}

	if len(r.Backends) > 0 {
		b.WriteString("\n### Servers\n\n")
		rows = nil
		for _, s := range r.Backends {
			rows = append(rows, []string{s.Pod, s.Node, s.IP})
		}
		b.WriteString(assert.MarkdownTable([]string{"Pod", "Node", "Pod IP"}, rows))
		fmt.Fprintf(&b, "\nService `%s` → %s\n", r.ServiceHost, assert.Or(r.ServiceIP, "–"))
	}

	if len(r.DNS) > 0 {
		b.WriteString("\n### DNS lookups\n\n")
		rows = nil
		for _, d := range r.DNS {
			rows = append(rows, []string{d.From, r.ServiceHost, assert.Or(d.Address, "–"), okCell(d.OK, d.Error)})
		}
		b.WriteString(assert.MarkdownTable([]string{"From node", "Name", "Address", "Result"}, rows))
	}

	if len(r.Requests) > 0 {
		b.WriteString("\n### Requests\n\n")
		rows = nil
		for _, q := range r.Requests {
			answered := "–"
			if q.ToPod != "" {
				answered = q.ToPod + " on " + assert.Or(q.ToNode, "?")
			}
			cross := "–"
			if q.ToNode != "" {
				cross = yesNo(q.ToNode != q.From)
			}
			rows = append(rows, []string{q.From, string(q.Via), q.URL, answered, cross, okCell(q.OK, q.Error)})
		}
		b.WriteString(assert.MarkdownTable([]string{"From node", "Via", "URL", "Answered by (asked for, if failed)", "Cross-node", "Result"}, rows))
	}

	for _, c := range r.Clients {
		if c.State == "" && len(c.Problems) == 0 && clientOK(r, c.Node) {
			continue
		}
		fmt.Fprintf(&b, "\n### Client %s on node %s: %s\n\n", c.Pod, c.Node, assert.Or(c.State, c.Phase))
		for _, p := range c.Problems {
			fmt.Fprintf(&b, "- %s\n", p)
		}
		if c.Log == "" {
			b.WriteString("- no log\n")
			continue
		}
		b.WriteString("- log:\n\n")
		assert.Fenced(&b, c.Log, "  ")
	}

	if len(r.Steps) > 0 {
		fmt.Fprintf(&b, "\nSteps: %s\n", r.Steps)
	}
	return b.String()
}

func (r *Result) verdict() string {
	if !r.Passed() {
		return "FAILED"
	}
	var notProven []string
	for _, p := range r.Proofs {
		if p.Status != Proven {
			notProven = append(notProven, fmt.Sprintf("%s: %s", p.Claim, p.Status))
		}
	}
	if len(notProven) > 0 {
		return "PASSED, not everything proven (" + strings.Join(notProven, "; ") + ")"
	}
	return "PASSED"
}

func clientOK(r *Result, node string) bool {
	for _, d := range r.DNS {
		if d.From == node && !d.OK {
			return false
		}
	}
	for _, q := range r.Requests {
		if q.From == node && !q.OK {
			return false
		}
	}
	return true
}

func symbol(s Status) string {
	switch s {
	case Proven:
		return "✓"
	case Failed:
		return "✗"
	default:
		return "–"
	}
}

func okCell(ok bool, err string) string {
	if ok {
		return "✓ ok"
	}
	return "✗ " + assert.Shorten(errOr(err), 200)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// failureWithoutLogs is Failure without the client log tails it quotes
// (its lines indented by tail): the report shows every failed client's
// whole log below, and twice the same log hides what failed.
func (r *Result) failureWithoutLogs() string {
	if len(r.Clients) == 0 {
		return r.Failure
	}
	var keep []string
	for _, line := range strings.Split(r.Failure, "\n") {
		if !strings.HasPrefix(line, logIndent) {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}
