package smoke

import (
	"strings"
	"testing"
	"time"

	"github.com/tkg-e2e/harness/framework/assert/asserttest"
	"github.com/tkg-e2e/harness/framework/wait"
)

// provenResult is a cluster of a tainted control plane and two workers where
// everything worked: servers on the workers, clients on all three nodes.
func provenResult() *Result {
	r := &Result{Cluster: "wl", Namespace: "tkg-e2e-smoke-abcde", Image: "busybox:1.35.0",
		Nodes:       []Node{{Name: "cp", Excluded: "taint node-role.kubernetes.io/control-plane:NoSchedule"}, {Name: "n1", Schedulable: true}, {Name: "n2", Schedulable: true}},
		ClientNodes: []string{"cp", "n1", "n2"},
		Backends:    twoBackends, ServiceHost: host, ServiceIP: "10.96.0.42",
		Steps: wait.Steps{{Name: StepNodes, Duration: 20 * time.Millisecond}, {Name: StepServers, Duration: 4 * time.Second}}}
	addClientReports(r)
	for i, node := range r.ClientNodes {
		r.Clients = append(r.Clients, Client{Pod: clientName(i), Node: node, Phase: "Succeeded", Log: "smoke done failed=0\n"})
	}
	r.Proofs = prove(r, true, true)
	return r
}

func TestMarkdownOfAProvenCluster(t *testing.T) {
	md := provenResult().Markdown()
	asserttest.Says(t, "markdown", md, "## Smoke test of cluster wl: PASSED\n", "Namespace `tkg-e2e-smoke-abcde`, image `busybox:1.35.0`",
		"| pod traffic crosses from one node to another | ✓ proven | cp → web-a on n1 via service (and 4 more) |",
		"| every client node resolves the Service's name to its ClusterIP | ✓ proven | "+host+" → 10.96.0.42 from cp, n1, n2 |",
		"| the Service answers from every client node | ✓ proven | 3 requests from 3 nodes answered |",
		"| every server answers on its pod IP from every client node | ✓ proven | 6 requests from 3 nodes answered |",
		"| cp | no | taint node-role.kubernetes.io/control-plane:NoSchedule |", "\nClients on: cp, n1, n2\n",
		"| cp | "+host+" | 10.96.0.42 | ✓ ok |", "| cp | pod IP | http://10.244.1.5:8080/ | web-a on n1 | yes | ✓ ok |",
		"| web-a | n1 | 10.244.1.5 |", "Service `"+host+"` → 10.96.0.42",
		"| n2 | "+host+" | 10.96.0.42 | ✓ ok |",
		"| n1 | pod IP | http://10.244.2.7:8080/ | web-b on n2 | yes | ✓ ok |",
		"Steps: nodes 0s, servers 4s")
	asserttest.SaysNot(t, "markdown", md, "Failure:", "### Client", "not everything proven")
}

func TestMarkdownOfAFailedClientQuotesItsLogOnce(t *testing.T) {
	r := provenResult()
	// cp's three requests come first, then n1's: service, web-a, web-b.
	if q := r.Requests[5]; q.From != "n1" || q.Target != "web-b" {
		t.Fatalf("fixture changed: request 5 is %+v", q)
	}
	r.Requests[5] = Request{From: "n1", Via: ViaPodIP, Target: "web-b", URL: "http://10.244.2.7:8080/", ToPod: "web-b", ToNode: "n2",
		Error: "wget: no answer within 5 s (exit code 143)"}
	one := int32(1)
	r.Clients[1] = Client{Pod: "client-1", Node: "n1", Phase: "Failed", ExitCode: &one, State: "exit code 1 (Error)",
		Log: "smoke request via=pod-ip target=web-b url=http://10.244.2.7:8080/ fail error=wget: no answer within 5 s (exit code 143)\n```\nsmoke done failed=1\n"}
	r.Failure = `smoke test of cluster wl failed at step "clients": 1 of 3 clients found problems:` + "\n- client-1 on node n1 (exit code 1 (Error)): request to web-b via pod IP\n" +
		tail(r.Clients[1].Log, logTailLines, logIndent)
	r.Proofs = prove(r, true, true)
	md := r.Markdown()
	asserttest.Says(t, "markdown", md, "## Smoke test of cluster wl: FAILED", `failed at step "clients"`, "- client-1 on node n1 (exit code 1 (Error))",
		"| every server answers on its pod IP from every client node | ✗ failed | n1 → web-b: wget: no answer within 5 s (exit code 143) |",
		"### Client client-1 on node n1: exit code 1 (Error)", "  ````\n", "✗ wget: no answer within 5 s")
	if n := strings.Count(md, "smoke done failed=1"); n != 1 {
		t.Errorf("the client's log is quoted %d times, want once (under its client):\n%s", n, md)
	}
	asserttest.SaysNot(t, "markdown", md, "### Client client-0", "### Client client-2")
}

func TestMarkdownWhenTheRunStoppedEarly(t *testing.T) {
	r := &Result{Cluster: "wl", Image: "busybox:1.35.0", Nodes: []Node{{Name: "cp", Excluded: "taint x:NoSchedule"}},
		Failure: `smoke test of cluster wl failed at step "nodes": no schedulable node among 1`}
	r.Proofs = prove(r, false, false)
	asserttest.Says(t, "markdown", r.Markdown(), "Namespace `not created`", "| a server is Ready on every schedulable node | – not reached |",
		"no schedulable node among 1", "Clients on: none")
}
