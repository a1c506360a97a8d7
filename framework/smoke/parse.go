package smoke

import (
	"fmt"
	"strings"
)

// clientReport is what one client's log says.
type clientReport struct {
	DNS      *DNSLookup
	Requests []Request
	// Done is set by the script's last line: the script ran to its end.
	Done bool
	// Problems are what the log lacks or gets wrong: a check it does not
	// report, an answer from the wrong pod, a DNS answer that is not the
	// Service's ClusterIP.
	Problems []string
}

// reportLine is one "smoke ..." line: its kind (dns, request, done), its
// key=value fields, and whether it says ok or fail.
type reportLine struct {
	kind   string
	fields map[string]string
	ok     bool
}

// restKeys take the rest of the line as their value, since the answer of a
// server and the error of wget or nslookup hold spaces.
var restKeys = []string{"answer=", "error="}

func parseLine(line string) (reportLine, bool) {
	rest, found := strings.CutPrefix(strings.TrimRight(line, "\r"), "smoke ")
	if !found {
		return reportLine{}, false
	}
	l := reportLine{fields: map[string]string{}}
	for rest = strings.TrimLeft(rest, " "); rest != ""; rest = strings.TrimLeft(rest, " ") {
		if startsRest(rest) {
			k, v, _ := strings.Cut(rest, "=")
			l.fields[k] = strings.TrimSpace(v)
			break
		}
		var tok string
		tok, rest, _ = strings.Cut(rest, " ")
		switch {
		case l.kind == "":
			l.kind = tok
		case tok == "ok":
			l.ok = true
		case tok == "fail":
			l.ok = false
		default:
			if k, v, ok := strings.Cut(tok, "="); ok {
				l.fields[k] = v
			}
		}
	}
	return l, l.kind != ""
}

func startsRest(s string) bool {
	for _, k := range restKeys {
		if strings.HasPrefix(s, k) {
			return true
		}
	}
	return false
}

// parseAnswer reads a server's answer, "pod=<name> node=<node> ip=<ip>".
func parseAnswer(s string) (pod, node string) {
	for _, f := range strings.Fields(s) {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "pod":
			pod = v
		case "node":
			node = v
		}
	}
	return pod, node
}

// parseClientLog reads the log of the client on node from. It checks the
// log against what the client was asked to do (a lookup, the Service and
// every backend) so that a check the log does not mention is a problem, not
// a silent pass.
func parseClientLog(from, log string, serviceIP string, backends []Backend) clientReport {
	var rep clientReport
	seen := map[string]bool{}
	for _, line := range strings.Split(log, "\n") {
		l, ok := parseLine(line)
		if !ok {
			continue
		}
		switch l.kind {
		case "dns":
			d := DNSLookup{From: from, OK: l.ok, Address: l.fields["address"], Error: l.fields["error"]}
			if d.OK && serviceIP != "" && d.Address != serviceIP {
				d.OK = false
				d.Error = fmt.Sprintf("resolved to %s, not the Service's ClusterIP %s", d.Address, serviceIP)
			}
			rep.DNS = &d
		case "request":
			q := request(from, l, backends)
			seen[string(q.Via)+" "+q.Target] = true
			rep.Requests = append(rep.Requests, q)
		case "done":
			rep.Done = true
		}
	}
	if rep.DNS == nil {
		rep.Problems = append(rep.Problems, "no DNS lookup reported")
	}
	if !seen[string(ViaService)+" "+anyService(rep.Requests)] {
		rep.Problems = append(rep.Problems, "no request through the Service reported")
	}
	for _, b := range backends {
		if !seen[string(ViaPodIP)+" "+b.Pod] {
			rep.Problems = append(rep.Problems, fmt.Sprintf("no request to %s (%s) reported", b.Pod, b.IP))
		}
	}
	if !rep.Done {
		rep.Problems = append(rep.Problems, "the script did not reach its end")
	}
	return rep
}

func request(from string, l reportLine, backends []Backend) Request {
	q := Request{From: from, Target: l.fields["target"], URL: l.fields["url"], OK: l.ok, Error: l.fields["error"]}
	switch l.fields["via"] {
	case "service":
		q.Via = ViaService
		q.URL = "http://" + q.Target + "/"
	case "pod-ip":
		q.Via = ViaPodIP
	default:
		q.Via = Via(l.fields["via"])
	}
	if q.OK {
		q.ToPod, q.ToNode = parseAnswer(l.fields["answer"])
		if q.ToPod == "" {
			q.OK = false
			q.Error = fmt.Sprintf("answer %q does not name the pod that served it", l.fields["answer"])
		}
	}
	if q.Via == ViaPodIP {
		var want Backend
		for _, b := range backends {
			if b.Pod == q.Target {
				want = b
			}
		}
		if q.OK && q.ToPod != want.Pod {
			q.OK = false
			q.Error = fmt.Sprintf("asked %s, answered by %s", q.Target, q.ToPod)
		}
		// A failed request still says where it was going, so that the
		// cross-node proof can name the node that did not answer.
		if !q.OK {
			q.ToPod, q.ToNode = want.Pod, want.Node
		}
	}
	return q
}

// anyService returns the target of the first request through the Service.
func anyService(qs []Request) string {
	for _, q := range qs {
		if q.Via == ViaService {
			return q.Target
		}
	}
	return ""
}
