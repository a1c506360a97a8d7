package vsphere

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// explainConnectError turns the three usual ways a first connection fails
// (untrusted certificate, wrong thumbprint, wrong credentials) into a message
// that says which setting to change. The password never appears: govmomi's
// login fault does not carry it and the URL has no user information.
func explainConnectError(ctx context.Context, u *url.URL, in SessionInput, err error) error {
	var op *net.OpError
	switch {
	case errors.As(err, &op) && op.Op == "dial":
		return fmt.Errorf("cannot reach vCenter %s (%s): %v; check the server address and port in the profile, "+
			"and that this machine can reach it (VPN, firewall, proxy)", u, hostPort(u), op.Err)
	case fault.Is(err, &types.InvalidLogin{}):
		return fmt.Errorf("vCenter %s rejected the login of user %q: incorrect user name or password; "+
			"check the vSphere username and password in the profile or environment (the password is not shown)", u, in.Username)
	case soap.IsCertificateUntrusted(err):
		return fmt.Errorf("vCenter %s presented a certificate this machine does not trust (%v)%s; "+
			"set the TLS thumbprint in the profile (or insecure: true for a lab vCenter)", u, err, presented(ctx, u, in.ConnectTimeout))
	case strings.Contains(err.Error(), "thumbprint does not match"):
		return fmt.Errorf("vCenter %s: the configured TLS thumbprint %s does not match the server certificate%s; "+
			"update the thumbprint in the profile if the certificate was rotated on purpose", u, in.Thumbprint, presented(ctx, u, in.ConnectTimeout))
	}
	return fmt.Errorf("connecting to vCenter %s as %q: %w", u, in.Username, err)
}

// presented reports the certificate thumbprint the server shows, so the
// reader can compare it with what the vCenter administrator publishes
// instead of having to fetch it with another tool.
func presented(ctx context.Context, u *url.URL, timeout time.Duration) string {
	d := tls.Dialer{NetDialer: &net.Dialer{Timeout: timeout}, Config: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // only reads the certificate to report it
	conn, err := d.DialContext(ctx, "tcp", hostPort(u))
	if err != nil {
		return ""
	}
	defer conn.Close()
	certs := conn.(*tls.Conn).ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return ""
	}
	return fmt.Sprintf("; the server presents SHA-256 thumbprint %s", soap.ThumbprintSHA256(certs[0]))
}
