package smoke

import (
	"fmt"
	"strings"
)

// prove derives the proofs from what the run collected: the servers are
// judged against the schedulable nodes, DNS and the requests against the
// client nodes (r.ClientNodes), each of which must have reported. reached
// says how far the run got: a proof whose evidence an earlier failure
// prevented is "not reached", never proven and never failed.
func prove(r *Result, serversReached, clientsReached bool) []Proof {
	schedulable := names(r.Nodes, true)
	var proofs []Proof
	add := func(claim string, st Status, detail string) {
		proofs = append(proofs, Proof{Claim: claim, Status: st, Detail: detail})
	}
	switch {
	case !serversReached:
		add(ClaimServers, NotReached, "the run stopped before the servers were started")
	case len(r.Backends) == len(schedulable) && len(schedulable) > 0:
		add(ClaimServers, Proven, backendsLine(r.Backends))
	default:
		add(ClaimServers, Failed, fmt.Sprintf("%d of %d servers Ready on distinct nodes", len(r.Backends), len(schedulable)))
	}
	if !clientsReached {
		for _, c := range []string{ClaimDNS, ClaimService, ClaimPodIPs, ClaimCrossNode} {
			add(c, NotReached, "the run stopped before the clients reported")
		}
		return proofs
	}
	clients := r.ClientNodes
	st, detail := dnsProof(r, clients)
	add(ClaimDNS, st, detail)
	st, detail = requestsProof(r, ViaService, clients, 1)
	add(ClaimService, st, detail)
	st, detail = requestsProof(r, ViaPodIP, clients, len(r.Backends))
	add(ClaimPodIPs, st, detail)
	st, detail = crossNode(r.Requests, clients)
	add(ClaimCrossNode, st, detail)
	return proofs
}

// dnsProof: every client node looked the Service up and got its ClusterIP.
func dnsProof(r *Result, clients []string) (Status, string) {
	if len(clients) == 0 {
		return Failed, "no client node"
	}
	ok := map[string]bool{}
	var bad []string
	for _, d := range r.DNS {
		if d.OK {
			ok[d.From] = true
		} else {
			bad = append(bad, fmt.Sprintf("%s: %s", d.From, errOr(d.Error)))
		}
	}
	if missing := without(clients, ok); len(missing) > 0 || len(bad) > 0 {
		for _, m := range missing {
			if !containsPrefix(bad, m+": ") {
				bad = append(bad, m+": no lookup reported")
			}
		}
		return Failed, strings.Join(bad, "; ")
	}
	return Proven, fmt.Sprintf("%s → %s from %s", r.ServiceHost, r.ServiceIP, strings.Join(clients, ", "))
}

// requestsProof: every client node made perNode requests via via, and all succeeded.
func requestsProof(r *Result, via Via, clients []string, perNode int) (Status, string) {
	if len(clients) == 0 {
		return Failed, "no client node"
	}
	count := map[string]int{}
	var bad []string
	for _, q := range r.Requests {
		if q.Via != via {
			continue
		}
		if q.OK {
			count[q.From]++
		} else {
			bad = append(bad, fmt.Sprintf("%s → %s: %s", q.From, q.Target, errOr(q.Error)))
		}
	}
	for _, n := range clients {
		if count[n] < perNode && !containsPrefix(bad, n+" → ") {
			bad = append(bad, fmt.Sprintf("%s: %d of %d requests reported", n, count[n], perNode))
		}
	}
	if len(bad) > 0 {
		return Failed, strings.Join(bad, "; ")
	}
	total := 0
	for _, c := range count {
		total += c
	}
	return Proven, fmt.Sprintf("%d requests from %d nodes answered", total, len(clients))
}

// crossNode decides the cross-node claim: proven by one successful request
// answered on another node than its client's; not possible with clients on
// fewer than two nodes (a one-node cluster: there is no other node to
// reach; a control plane with one worker has clients on both, and the
// control plane's requests reach the worker's server); failed otherwise,
// naming the cross-node requests that were tried and how they failed.
func crossNode(requests []Request, clients []string) (Status, string) {
	if len(clients) < 2 {
		return NotPossible, fmt.Sprintf("not possible: clients on %d node (%s); traffic between nodes was not tested",
			len(clients), orNone(strings.Join(clients, ", ")))
	}
	var proven []string
	var tried []string
	for _, q := range requests {
		if q.CrossNode() {
			proven = append(proven, fmt.Sprintf("%s → %s on %s via %s", q.From, q.ToPod, q.ToNode, q.Via))
			continue
		}
		if !q.OK && q.Via == ViaPodIP && q.ToNode != "" && q.ToNode != q.From {
			tried = append(tried, fmt.Sprintf("%s → %s on %s: %s", q.From, q.Target, q.ToNode, errOr(q.Error)))
		}
	}
	if len(proven) > 0 {
		detail := proven[0]
		if len(proven) > 1 {
			detail += fmt.Sprintf(" (and %d more)", len(proven)-1)
		}
		return Proven, detail
	}
	if len(tried) == 0 {
		return Failed, "no request crossed nodes and none was reported trying"
	}
	return Failed, "no request crossed nodes: " + strings.Join(tried, "; ")
}

func backendsLine(bs []Backend) string {
	parts := make([]string, 0, len(bs))
	for _, b := range bs {
		parts = append(parts, b.Pod+" on "+b.Node)
	}
	return strings.Join(parts, ", ")
}

func without(all []string, have map[string]bool) []string {
	var out []string
	for _, a := range all {
		if !have[a] {
			out = append(out, a)
		}
	}
	return out
}

func containsPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func errOr(s string) string {
	if s == "" {
		return "failed without a message"
	}
	return s
}
