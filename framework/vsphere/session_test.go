package vsphere_test

import (
	"context"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tkg-e2e/harness/framework/redact"
	"github.com/tkg-e2e/harness/framework/vsphere"
)

func TestConnectVerifiesCertificateByCAFileOrThumbprint(t *testing.T) {
	ctx := context.Background()
	for name, mod := range map[string]func(*vsphere.SessionInput){
		"ca file":    func(in *vsphere.SessionInput) {},
		"thumbprint": func(in *vsphere.SessionInput) { in.CAFile, in.Thumbprint = "", sim.Thumbprint },
		"insecure":   func(in *vsphere.SessionInput) { in.CAFile, in.Insecure = "", true },
	} {
		t.Run(name, func(t *testing.T) {
			in := sessionInput()
			mod(&in)
			s, err := vsphere.Connect(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			if s.URL.User != nil {
				t.Errorf("session URL carries user information: %s", s.URL)
			}
			if err := s.Close(ctx); err != nil {
				t.Errorf("logout: %v", err)
			}
		})
	}
}

func TestConnectCAFileMustBeReadablePEM(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "ca.txt")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{
		notPEM:             "the vCenter CA file " + notPEM + " holds no PEM certificate",
		"/nonexistent.pem": "reading the vCenter CA file: open /nonexistent.pem: no such file or directory",
	} {
		in := sessionInput()
		in.CAFile = file
		_, err := vsphere.Connect(context.Background(), in)
		mustContain(t, err, want)
	}
	// The bundle adds to the system roots: they are still there.
	pool, err := vsphere.CAPool(sessionInput().CAFile)
	if err != nil {
		t.Fatal(err)
	}
	if sys, err := x509.SystemCertPool(); err == nil && len(sys.Subjects()) > 0 && len(pool.Subjects()) != len(sys.Subjects())+1 { //nolint:staticcheck // counting is all this needs
		t.Errorf("pool has %d subjects, want the system's %d plus 1", len(pool.Subjects()), len(sys.Subjects()))
	}
}

func TestConnectBadCredentialsSaysSoWithoutThePassword(t *testing.T) {
	in := sessionInput()
	in.Password = "not-the-password-42"
	_, err := vsphere.Connect(context.Background(), in)
	mustContain(t, err, sim.Server, `user "administrator@vsphere.local"`, "incorrect user name or password")
	if strings.Contains(err.Error(), in.Password) {
		t.Errorf("error shows the password: %v", err)
	}
}

func TestConnectUnreachableFailsFastNamingTheServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close() // nothing listens there now
	in := sessionInput()
	in.Server = addr
	start := time.Now()
	_, err = vsphere.Connect(context.Background(), in)
	mustContain(t, err, "cannot reach vCenter https://"+addr+"/sdk", "connection refused", "check the server address")
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %s to fail", d)
	}
}

// A server that accepts TCP but never answers TLS is what a wrong port or a
// black-holing proxy looks like; govmomi's TLS dial has no deadline of its own.
func TestConnectTimeoutBoundsASilentServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	in := sessionInput()
	in.Server = l.Addr().String()
	in.ConnectTimeout = 500 * time.Millisecond
	start := time.Now()
	_, err = vsphere.Connect(context.Background(), in)
	mustContain(t, err, "did not answer within 500ms", l.Addr().String())
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %s, want about the 500ms connect timeout", d)
	}
}

func TestConnectUntrustedCertificateShowsThumbprint(t *testing.T) {
	in := sessionInput()
	in.CAFile = ""
	_, err := vsphere.Connect(context.Background(), in)
	mustContain(t, err, "does not trust", "presents SHA-256 thumbprint "+sim.Thumbprint, "set the TLS thumbprint")
}

func TestConnectWrongThumbprint(t *testing.T) {
	in := sessionInput()
	in.CAFile, in.Thumbprint = "", "AA:BB:CC"
	_, err := vsphere.Connect(context.Background(), in)
	mustContain(t, err, "thumbprint AA:BB:CC does not match", "presents SHA-256 thumbprint "+sim.Thumbprint)
}

func TestConnectRejectsMissingInputs(t *testing.T) {
	for name, c := range map[string]struct {
		mod  func(*vsphere.SessionInput)
		want string
	}{
		"no server":   {func(in *vsphere.SessionInput) { in.Server = "" }, "vCenter server is empty"},
		"no password": {func(in *vsphere.SessionInput) { in.Password = "" }, "username and password are required"},
		"no timeout":  {func(in *vsphere.SessionInput) { in.ConnectTimeout = 0 }, "ConnectTimeout must be > 0"},
	} {
		t.Run(name, func(t *testing.T) {
			in := sessionInput()
			c.mod(&in)
			_, err := vsphere.Connect(context.Background(), in)
			mustContain(t, err, c.want)
		})
	}
}

func TestConnectTeachesTheRedactorThePassword(t *testing.T) {
	r := redact.New()
	in := sessionInput()
	in.Redactor = r
	s, err := vsphere.Connect(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	if got := r.String("pw=" + sim.Password); strings.Contains(got, sim.Password) {
		t.Errorf("redactor does not mask the password: %q", got)
	}
}
