package smoke

import (
	"strings"
	"testing"
)

func TestCrossNodeProvenByOneRequestToAnotherNode(t *testing.T) {
	reqs := []Request{
		{From: "n1", Via: ViaPodIP, Target: "web-a", ToPod: "web-a", ToNode: "n1", OK: true},
		{From: "n1", Via: ViaPodIP, Target: "web-b", ToPod: "web-b", ToNode: "n2", OK: true},
	}
	st, detail := crossNode(reqs, []string{"n1", "n2"})
	if st != Proven || detail != "n1 → web-b on n2 via pod IP" {
		t.Fatalf("got %s %q", st, detail)
	}
}

func TestCrossNodeNotPossibleWithClientsOnOneNode(t *testing.T) {
	reqs := []Request{{From: "n1", Via: ViaPodIP, Target: "web-a", ToPod: "web-a", ToNode: "n1", OK: true}}
	st, detail := crossNode(reqs, []string{"n1"})
	if st != NotPossible || detail != "not possible: clients on 1 node (n1); traffic between nodes was not tested" {
		t.Fatalf("got %s %q", st, detail)
	}
	if st, detail := crossNode(nil, nil); st != NotPossible || !strings.Contains(detail, "clients on 0 node (none)") {
		t.Fatalf("no clients: got %s %q", st, detail)
	}
}

// addClientReports adds what every client node of r reports when every
// check passed (the script's log, parsed), to r's DNS and Requests.
func addClientReports(r *Result) {
	for _, node := range r.ClientNodes {
		rep := parseClientLog(node, scriptLog(node, r.ServiceHost, r.ServiceIP, r.Backends), r.ServiceIP, r.Backends)
		r.DNS = append(r.DNS, *rep.DNS)
		r.Requests = append(r.Requests, rep.Requests...)
	}
}

// capdResult is CAPD's default shape: a control plane tainted NoSchedule and
// one worker; the server on the worker, clients on both, each reporting
// every check passed.
func capdResult() *Result {
	backends := []Backend{{Pod: "web-md-0", Node: "md-0", IP: "10.244.1.5"}}
	r := &Result{
		Nodes:       []Node{{Name: "cp", Excluded: "taint node-role.kubernetes.io/control-plane:NoSchedule"}, {Name: "md-0", Schedulable: true}},
		ClientNodes: []string{"cp", "md-0"},
		Backends:    backends,
		ServiceHost: host, ServiceIP: "10.96.0.42",
	}
	addClientReports(r)
	return r
}

func TestProveACAPDShapedClusterCrossesFromTheControlPlane(t *testing.T) {
	r := capdResult()
	r.Proofs = prove(r, true, true)
	for _, p := range r.Proofs {
		if p.Status != Proven {
			t.Errorf("%s: %s (%s)", p.Claim, p.Status, p.Detail)
		}
	}
	if !r.Proven() {
		t.Errorf("one worker and a control plane must prove everything: %+v", r.Proofs)
	}
	want := map[string]string{
		ClaimServers:   "web-md-0 on md-0",
		ClaimDNS:       host + " → 10.96.0.42 from cp, md-0",
		ClaimService:   "2 requests from 2 nodes answered",
		ClaimPodIPs:    "2 requests from 2 nodes answered",
		ClaimCrossNode: "cp → web-md-0 on md-0 via service (and 1 more)",
	}
	for _, p := range r.Proofs {
		if p.Detail != want[p.Claim] {
			t.Errorf("%s: detail %q, want %q", p.Claim, p.Detail, want[p.Claim])
		}
	}
	// Without the control plane's client nothing crosses nodes.
	r.ClientNodes = []string{"md-0"}
	if p := prove(r, true, true)[4]; p.Status != NotPossible {
		t.Errorf("clients on md-0 only: %+v", p)
	}
}

func TestCrossNodeFailsNamingTheRequestsThatTried(t *testing.T) {
	reqs := []Request{
		{From: "n1", Via: ViaPodIP, Target: "web-a", ToPod: "web-a", ToNode: "n1", OK: true},
		{From: "n1", Via: ViaPodIP, Target: "web-b", ToPod: "web-b", ToNode: "n2", Error: "wget: download timed out"},
		// Through the Service, kube-proxy picked the local pod: not cross-node.
		{From: "n2", Via: ViaService, Target: host, ToPod: "web-b", ToNode: "n2", OK: true},
	}
	st, detail := crossNode(reqs, []string{"n1", "n2"})
	if st != Failed || detail != "no request crossed nodes: n1 → web-b on n2: wget: download timed out" {
		t.Fatalf("got %s %q", st, detail)
	}
	if st, _ := crossNode(nil, []string{"n1", "n2"}); st != Failed {
		t.Fatalf("no requests at all must fail, got %s", st)
	}
}

func TestProveSaysWhatWasNotReached(t *testing.T) {
	r := &Result{Nodes: []Node{{Name: "n1", Schedulable: true}, {Name: "n2", Schedulable: true}},
		Backends: []Backend{{Pod: "web-a", Node: "n1"}}}
	proofs := prove(r, true, false)
	if proofs[0].Status != Failed || proofs[0].Detail != "1 of 2 servers Ready on distinct nodes" {
		t.Errorf("servers: %+v", proofs[0])
	}
	for _, p := range proofs[1:] {
		if p.Status != NotReached {
			t.Errorf("%s: %s, want not reached", p.Claim, p.Status)
		}
	}
	if proofs := prove(&Result{}, false, false); proofs[0].Status != NotReached {
		t.Errorf("servers never started: %+v", proofs[0])
	}
}

func TestProveFromClientReports(t *testing.T) {
	r := &Result{
		Nodes:       []Node{{Name: "cp", Excluded: "taint"}, {Name: "n1", Schedulable: true}, {Name: "n2", Schedulable: true}},
		ClientNodes: []string{"cp", "n1", "n2"},
		Backends:    twoBackends,
		ServiceHost: host, ServiceIP: "10.96.0.42",
	}
	addClientReports(r)
	for _, p := range prove(r, true, true) {
		if p.Status != Proven {
			t.Errorf("%s: %s (%s)", p.Claim, p.Status, p.Detail)
		}
	}
	// n2's lookup missing: the DNS claim fails and says for which node.
	full := *r
	r.DNS = r.DNS[:2]
	if p := prove(r, true, true)[1]; p.Status != Failed || p.Detail != "n2: no lookup reported" {
		t.Errorf("DNS with a node missing: %+v", p)
	}

	// The control plane's client reported nothing: it is a client node all
	// the same, so every claim it should have backed fails naming it.
	r = &full
	r.DNS, r.Requests = r.DNS[1:], r.Requests[3:]
	proofs := prove(r, true, true)
	for i, want := range []string{"cp: no lookup reported", "cp: 0 of 1 requests reported", "cp: 0 of 2 requests reported"} {
		if p := proofs[1+i]; p.Status != Failed || p.Detail != want {
			t.Errorf("%s without cp's report: %s %q, want failed %q", p.Claim, p.Status, p.Detail, want)
		}
	}

	// No client node at all proves nothing, rather than everything.
	r = &full
	r.ClientNodes = nil
	proofs = prove(r, true, true)
	for _, p := range proofs[1:4] {
		if p.Status != Failed || p.Detail != "no client node" {
			t.Errorf("%s without client nodes: %s %q", p.Claim, p.Status, p.Detail)
		}
	}
	if p := proofs[4]; p.Status != NotPossible {
		t.Errorf("cross-node without client nodes: %+v", p)
	}
}
