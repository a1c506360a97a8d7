package smoke

import (
	"strings"
	"testing"
)

var twoBackends = []Backend{{Pod: "web-a", Node: "n1", IP: "10.244.1.5"}, {Pod: "web-b", Node: "n2", IP: "10.244.2.7"}}

const host = "web.ns.svc.cluster.local"

func TestParseLineTakesAnswerAndErrorToTheEndOfTheLine(t *testing.T) {
	l, ok := parseLine("smoke request via=pod-ip target=web-b url=http://10.244.2.7:8080/ fail error=wget: can't connect to remote host (10.244.2.7): No route to host")
	if !ok || l.kind != "request" || l.ok || l.fields["error"] != "wget: can't connect to remote host (10.244.2.7): No route to host" ||
		l.fields["url"] != "http://10.244.2.7:8080/" || l.fields["target"] != "web-b" {
		t.Fatalf("got %+v", l)
	}
	l, ok = parseLine("smoke request via=service target=" + host + " ok answer=pod=web-a node=n1 ip=10.244.1.5 \r")
	if !ok || !l.ok || l.fields["answer"] != "pod=web-a node=n1 ip=10.244.1.5" {
		t.Fatalf("got %+v", l)
	}
	if _, ok := parseLine("client on node n1: smoke signals"); ok {
		t.Fatal("a line not starting with 'smoke ' is for people, not the parser")
	}
}

func TestParseClientLogAllPassed(t *testing.T) {
	rep := parseClientLog("n1", scriptLog("n1", host, "10.96.0.42", twoBackends), "10.96.0.42", twoBackends)
	if len(rep.Problems) != 0 || !rep.Done || rep.DNS == nil || !rep.DNS.OK || rep.DNS.Address != "10.96.0.42" {
		t.Fatalf("got %+v", rep)
	}
	if len(rep.Requests) != 3 {
		t.Fatalf("want 3 requests (Service + 2 pod IPs), got %+v", rep.Requests)
	}
	svc, cross := rep.Requests[0], rep.Requests[2]
	if svc.Via != ViaService || svc.URL != "http://"+host+"/" || svc.ToPod != "web-a" || svc.ToNode != "n1" || svc.CrossNode() {
		t.Errorf("service request = %+v", svc)
	}
	if cross.Via != ViaPodIP || cross.ToPod != "web-b" || cross.ToNode != "n2" || !cross.CrossNode() {
		t.Errorf("pod-IP request to web-b = %+v", cross)
	}
}

func TestParseClientLogFailedRequestKeepsWhereItWasGoing(t *testing.T) {
	rep := parseClientLog("n1", scriptLog("n1", host, "10.96.0.42", twoBackends, "web-b"), "10.96.0.42", twoBackends)
	q := rep.Requests[2]
	if q.OK || q.Error != "wget: download timed out" || q.ToNode != "n2" || q.CrossNode() {
		t.Fatalf("got %+v", q)
	}
	if len(rep.Problems) != 0 {
		t.Errorf("a reported failure is not a problem of the log: %v", rep.Problems)
	}
}

func TestParseClientLogNamesWhatIsMissingOrWrong(t *testing.T) {
	log := "smoke dns host=" + host + " ok address=10.96.0.99\n" +
		"smoke request via=pod-ip target=web-a url=http://10.244.1.5:8080/ ok answer=pod=web-b node=n2 ip=10.244.2.7\n" +
		"sh: syntax error: unexpected end of file\n"
	rep := parseClientLog("n1", log, "10.96.0.42", twoBackends)
	if rep.DNS.OK || !strings.Contains(rep.DNS.Error, "not the Service's ClusterIP 10.96.0.42") {
		t.Errorf("DNS answer that is not the ClusterIP accepted: %+v", rep.DNS)
	}
	if q := rep.Requests[0]; q.OK || q.Error != "asked web-a, answered by web-b" || q.ToNode != "n1" {
		t.Errorf("answer from the wrong pod accepted: %+v", q)
	}
	got := strings.Join(rep.Problems, "; ")
	for _, want := range []string{"no request through the Service reported", "no request to web-b (10.244.2.7) reported", "the script did not reach its end"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems %q lack %q", got, want)
		}
	}
	if rep := parseClientLog("n1", "exec: sh: not found\n", "10.96.0.42", twoBackends); len(rep.Problems) != 5 {
		t.Errorf("an empty report must name all 5 missing things, got %v", rep.Problems)
	}
}

func TestParseAnswerWithoutPodIsAFailure(t *testing.T) {
	log := "smoke request via=service target=" + host + " ok answer=<html>It works</html>\n"
	rep := parseClientLog("n1", log, "", nil)
	if q := rep.Requests[0]; q.OK || !strings.Contains(q.Error, "does not name the pod") {
		t.Fatalf("an answer that is not the server's accepted: %+v", q)
	}
}
