package vsphere

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/session/keepalive"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/soap"

	"github.com/tkg-e2e/harness/framework/redact"
)

// SessionInput says how to reach and log in to vCenter.
type SessionInput struct {
	// Server is host, host:port or an https URL; the path defaults to /sdk.
	Server string
	// Username and Password log in; the password is never logged or printed.
	Username string
	Password string
	// Thumbprint of the server certificate (SHA-256 or SHA-1, colon-separated
	// hex as vCenter shows it), for a vCenter whose CA this machine does not trust.
	Thumbprint string
	// CAFile is a PEM file of CA certificates to trust for vCenter (its VMCA
	// root, say) in addition to the system roots. With neither Thumbprint nor
	// Insecure, the certificate is verified against the system roots plus
	// this file.
	CAFile string
	// Insecure skips certificate verification altogether.
	Insecure bool
	// ConnectTimeout bounds reaching the server and logging in, so an
	// unreachable vCenter fails in seconds rather than after the OS TCP timeout.
	// Required (from the config intervals).
	ConnectTimeout time.Duration
	// KeepAlive is the idle interval after which the session is touched, so a
	// long import does not outlive the vCenter session timeout (30 min by
	// default). Zero means 5 minutes.
	KeepAlive time.Duration
	// Redactor, when set, learns the password so anything written through it
	// masks it.
	Redactor *redact.Redactor
}

// Session is a logged-in SOAP session.
type Session struct {
	// Client is the govmomi client, for callers that need more than this package offers.
	Client *govmomi.Client
	// URL of the SDK endpoint, without user information.
	URL *url.URL
	// Username the session logged in with.
	Username string
}

// Vim is the underlying vim25 client.
func (s *Session) Vim() *vim25.Client { return s.Client.Client }

// Connect reaches vCenter, checks its certificate and logs in. Every failure
// names the server and says what to change.
func Connect(ctx context.Context, in SessionInput) (*Session, error) {
	u, err := serverURL(in.Server)
	if err != nil {
		return nil, err
	}
	if in.Username == "" || in.Password == "" {
		return nil, fmt.Errorf("vCenter %s: username and password are required (set them in the profile or the environment)", u)
	}
	if in.ConnectTimeout <= 0 {
		return nil, fmt.Errorf("vCenter %s: ConnectTimeout must be > 0 (set it from the config intervals)", u)
	}
	if in.Redactor != nil {
		in.Redactor.Add(in.Password)
	}
	type result struct {
		c   *govmomi.Client
		err error
	}
	cctx, cancel := context.WithTimeout(ctx, in.ConnectTimeout)
	defer cancel()
	done := make(chan result, 1)
	go func() {
		c, err := login(cctx, u, in)
		done <- result{c, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, explainConnectError(ctx, u, in, r.err)
		}
		return &Session{Client: r.c, URL: u, Username: in.Username}, nil
	case <-cctx.Done():
		// govmomi's TLS dial ignores the context (an unreachable address would
		// wait for the OS TCP timeout); leave it behind rather than hang.
		go func() {
			if r := <-done; r.c != nil {
				_ = r.c.Logout(context.Background())
			}
		}()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("connecting to vCenter %s: %w", u, ctx.Err())
		}
		return nil, fmt.Errorf("vCenter %s did not answer within %s (no TLS handshake and login completed); check the server "+
			"address and port in the profile, that this machine can reach it (VPN, firewall, proxy) and that it is the vCenter SDK endpoint", u, in.ConnectTimeout)
	}
}

func login(ctx context.Context, u *url.URL, in SessionInput) (*govmomi.Client, error) {
	sc := soap.NewClient(u, in.Insecure)
	if in.CAFile != "" {
		pool, err := CAPool(in.CAFile)
		if err != nil {
			return nil, err
		}
		sc.DefaultTransport().TLSClientConfig.RootCAs = pool
	}
	if in.Thumbprint != "" {
		sc.SetThumbprint(u.Host, strings.ToUpper(strings.TrimSpace(in.Thumbprint)))
	}
	vc, err := vim25.NewClient(ctx, sc)
	if err != nil {
		return nil, err
	}
	idle := in.KeepAlive
	if idle <= 0 {
		idle = 5 * time.Minute
	}
	// The handler starts on Login and stops on Logout.
	vc.RoundTripper = keepalive.NewHandlerSOAP(vc.RoundTripper, idle, nil)
	c := &govmomi.Client{Client: vc, SessionManager: session.NewManager(vc)}
	if err := c.Login(ctx, url.UserPassword(in.Username, in.Password)); err != nil {
		return nil, err
	}
	return c, nil
}

// CAPool is the system's trusted roots plus the PEM certificates of file
// (soap.Client.SetRootCAs would replace the system roots instead). A file
// that is unreadable or holds no PEM certificate is an error naming it.
func CAPool(file string) (*x509.CertPool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading the vCenter CA file: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("the vCenter CA file %s holds no PEM certificate (-----BEGIN CERTIFICATE-----); "+
			"give the CA bundle in PEM form (e.g. vCenter's /certs/download.zip, the .0 files)", file)
	}
	return pool, nil
}

// Close logs out; the keepalive stops with it.
func (s *Session) Close(ctx context.Context) error {
	if s == nil || s.Client == nil {
		return nil
	}
	return s.Client.Logout(ctx)
}

// serverURL accepts what people write in a profile (vc.example.com,
// vc.example.com:8443, https://vc.example.com/sdk) and drops any user
// information so that no credential can travel inside the URL.
func serverURL(server string) (*url.URL, error) {
	s := strings.TrimSpace(server)
	if s == "" {
		return nil, errors.New("vCenter server is empty: set the vSphere server (host, host:port or https://host/sdk) in the profile")
	}
	u, err := soap.ParseURL(s)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("vCenter server %q is not a host, host:port or URL: %v", s, err)
	}
	u.User = nil
	return u, nil
}

func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	if u.Scheme == "http" {
		return net.JoinHostPort(u.Hostname(), "80")
	}
	return net.JoinHostPort(u.Hostname(), "443")
}
