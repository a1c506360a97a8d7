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

func TestCrossNodeNotPossibleWithOneSchedulableNode(t *testing.T) {
	reqs := []Request{{From: "n1", Via: ViaPodIP, Target: "web-a", ToPod: "web-a", ToNode: "n1", OK: true}}
	st, detail := crossNode(reqs, []string{"n1"})
	if st != NotPossible || !strings.Contains(detail, "not possible: 1 schedulable node (n1)") {
		t.Fatalf("got %s %q", st, detail)
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
		Backends:    twoBackends,
		ServiceHost: host, ServiceIP: "10.96.0.42",
	}
	for _, node := range []string{"n1", "n2"} {
		rep := parseClientLog(node, scriptLog(node, host, "10.96.0.42", twoBackends), "10.96.0.42", twoBackends)
		r.DNS = append(r.DNS, *rep.DNS)
		r.Requests = append(r.Requests, rep.Requests...)
	}
	for _, p := range prove(r, true, true) {
		if p.Status != Proven {
			t.Errorf("%s: %s (%s)", p.Claim, p.Status, p.Detail)
		}
	}
	// n2's lookup missing: the DNS claim fails and says for which node.
	r.DNS = r.DNS[:1]
	if p := prove(r, true, true)[1]; p.Status != Failed || p.Detail != "n2: no lookup reported" {
		t.Errorf("DNS with a node missing: %+v", p)
	}
}
