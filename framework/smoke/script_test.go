package smoke

import (
	"encoding/binary"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestScriptsWithBusybox runs serverScript and clientScript with the
// busybox of the host (the kit's image is busybox:1.35.0; Debian 12 ships
// the same version), so that what the harness parses is what busybox
// prints, not what a fake says it prints. nslookup asks a DNS server in
// this test, which answers every A query with the "ClusterIP" and knows no
// other name than localhost; wget reaches the server on 127.0.0.1.
func TestScriptsWithBusybox(t *testing.T) {
	bb, err := exec.LookPath("busybox")
	if err != nil {
		t.Skip("busybox is not installed: the scripts are proven on a real cluster only")
	}
	bin := t.TempDir()
	for _, applet := range []string{"sh", "httpd", "wget", "nslookup", "timeout", "awk", "tr", "date", "sleep", "printf"} {
		if err := os.Symlink(bb, filepath.Join(bin, applet)); err != nil {
			t.Fatal(err)
		}
	}
	dns := fakeDNS(t, "localhost", net.IPv4(10, 96, 0, 42))
	// busybox's sh runs its own applets without looking at PATH, so the
	// script itself is pointed at the test's DNS server (and rid of the
	// port the test needs in SMOKE_SERVICE_HOST).
	lookup := `bounded nslookup "$SMOKE_SERVICE_HOST"`
	if strings.Count(clientScript, lookup) != 1 {
		t.Fatalf("clientScript no longer has %s: update this test", lookup)
	}
	script := strings.Replace(clientScript, lookup, `bounded nslookup "${SMOKE_SERVICE_HOST%%:*}" `+dns, 1)

	www := t.TempDir()
	port := freePort(t)
	server := strings.NewReplacer("/www", www, "-p 8080", "-p 127.0.0.1:"+port).Replace(serverScript)
	srv := exec.Command(bb, "sh", "-c", server)
	srv.Env = []string{"PATH=" + bin, "POD_NAME=web-a", "NODE_NAME=n1", "POD_IP=10.244.1.5"}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })

	// web-c accepts connections and never answers: a request that hangs
	// must end with the attempt's bound, not with the client's budget.
	hang, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hang.Close() })
	go func() {
		for {
			c, err := hang.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	backends := []Backend{{Pod: "web-a", Node: "n1", IP: "10.244.1.5"}, {Pod: "web-b", Node: "n2", IP: "10.244.2.7"},
		{Pod: "web-c", Node: "n3", IP: "10.244.3.9"}}
	client := func(host string) (string, int) {
		cmd := exec.Command(bb, "sh", "-c", script)
		cmd.Env = []string{"PATH=" + bin, "SMOKE_NODE=n2", "SMOKE_SERVICE_HOST=" + host,
			// web-b's port has nobody listening: a pod IP that does not answer.
			"SMOKE_BACKENDS=web-a=http://127.0.0.1:" + port + "/ web-b=http://127.0.0.1:" + freePort(t) + "/ web-c=http://" + hang.Addr().String() + "/",
			"SMOKE_BUDGET_SECONDS=2", "SMOKE_ATTEMPT_SECONDS=1"}
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
		return string(out), cmd.ProcessState.ExitCode()
	}

	log, code := client("localhost:" + port)
	t.Logf("client log:\n%s", log)
	if code != 1 {
		t.Errorf("exit code %d with web-b unreachable, want 1", code)
	}
	rep := parseClientLog("n2", log, "10.96.0.42", backends)
	if len(rep.Problems) != 0 || !rep.Done {
		t.Fatalf("problems %v", rep.Problems)
	}
	if !rep.DNS.OK || rep.DNS.Address != "10.96.0.42" {
		t.Errorf("DNS %+v", rep.DNS)
	}
	svc, a, b, c := rep.Requests[0], rep.Requests[1], rep.Requests[2], rep.Requests[3]
	if c.OK || c.Error != "wget: no answer within 1 s (exit code 143)" {
		t.Errorf("request to a server that never answers %+v", c)
	}
	if !svc.OK || svc.ToPod != "web-a" || svc.ToNode != "n1" || !svc.CrossNode() {
		t.Errorf("service request %+v", svc)
	}
	if !a.OK || a.ToPod != "web-a" {
		t.Errorf("request to web-a %+v", a)
	}
	if b.OK || !strings.Contains(b.Error, "Connection refused") || b.ToNode != "n2" {
		t.Errorf("request to web-b %+v", b)
	}

	log, _ = client("nowhere:" + port)
	t.Logf("client log, unknown name:\n%s", log)
	rep = parseClientLog("n2", log, "10.96.0.42", backends)
	if rep.DNS == nil || rep.DNS.OK || !strings.Contains(rep.DNS.Error, "can't find nowhere") {
		t.Errorf("a name DNS does not know: %+v", rep.DNS)
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// fakeDNS answers A queries for name with ip, AAAA queries for it with no
// record, and every other name with NXDOMAIN, as CoreDNS does for a
// Service in an IPv4 cluster. It returns its "127.0.0.1:port".
func fakeDNS(t *testing.T, name string, ip net.IP) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if resp := dnsAnswer(buf[:n], name, ip); resp != nil {
				_, _ = pc.WriteTo(resp, from)
			}
		}
	}()
	_ = pc.SetDeadline(time.Now().Add(time.Minute))
	return pc.LocalAddr().String()
}

func dnsAnswer(q []byte, name string, ip net.IP) []byte {
	if len(q) < 12 {
		return nil
	}
	var labels []string
	i := 12
	for i < len(q) && q[i] != 0 {
		l := int(q[i])
		if i+1+l > len(q) {
			return nil
		}
		labels = append(labels, string(q[i+1:i+1+l]))
		i += 1 + l
	}
	if i+5 > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[i+1:])
	question := q[12 : i+5]
	resp := append([]byte{}, q[:2]...)
	flags := uint16(0x8180) // response, recursion desired and available, NOERROR
	found := strings.EqualFold(strings.Join(labels, "."), name)
	if !found {
		flags |= 3 // NXDOMAIN
	}
	answers := uint16(0)
	if found && qtype == 1 {
		answers = 1
	}
	resp = binary.BigEndian.AppendUint16(resp, flags)
	resp = binary.BigEndian.AppendUint16(resp, 1)
	resp = binary.BigEndian.AppendUint16(resp, answers)
	resp = append(resp, 0, 0, 0, 0)
	resp = append(resp, question...)
	if answers == 1 {
		resp = append(resp, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 30, 0, 4)
		resp = append(resp, ip.To4()...)
	}
	return resp
}
