package vsphere

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"net/url"

	"github.com/vmware/govmomi/simulator"
)

// Simulator is an in-process vcsim (VPX model: datacenter DC0, cluster DC0_C0
// and host DC0_H0 with a resource pool each, datastore LocalDS_0, networks
// "VM Network" and DC0_DVPG0) served over HTTPS on 127.0.0.1 with a random
// port. The stage talks to it through the real SOAP API, like to any vCenter.
type Simulator struct {
	// Server is https://127.0.0.1:<port>/sdk.
	Server string
	// Username and Password are the only credentials it accepts; the password
	// is random per start so a test of bad credentials means something.
	Username, Password string
	// Thumbprint is the SHA-256 thumbprint of its self-signed certificate, and
	// CAFile that certificate as PEM, so a session can verify it instead of
	// running insecure.
	Thumbprint string
	CAFile     string

	model  *simulator.Model
	server *simulator.Server
}

// SimulatorUsername is the user the simulator accepts.
const SimulatorUsername = "administrator@vsphere.local"

// StartSimulator starts vcsim with a random password. Close it when done: it
// also removes the simulator's temporary datastore directories.
func StartSimulator() (*Simulator, error) { return StartSimulatorWithPassword("") }

// StartSimulatorWithPassword starts vcsim accepting only password (random
// when empty): a run can give it the hardest password it must keep out of
// every log and artifact.
func StartSimulatorWithPassword(password string) (*Simulator, error) {
	m := simulator.VPX()
	if err := m.Create(); err != nil {
		return nil, fmt.Errorf("starting vcsim: %w", err)
	}
	if password == "" {
		pw := make([]byte, 12)
		if _, err := rand.Read(pw); err != nil {
			m.Remove()
			return nil, err
		}
		password = hex.EncodeToString(pw)
	}
	m.Service.TLS = new(tls.Config)
	m.Service.Listen = &url.URL{Host: "127.0.0.1:0", User: url.UserPassword(SimulatorUsername, password)}
	s := m.Service.NewServer()
	u := *s.URL
	u.User = nil
	ca, err := s.CertificateFile()
	if err != nil {
		s.Close()
		m.Remove()
		return nil, fmt.Errorf("starting vcsim: writing its certificate: %w", err)
	}
	return &Simulator{
		CAFile:     ca,
		Server:     u.String(),
		Username:   SimulatorUsername,
		Password:   password,
		Thumbprint: s.CertificateInfo().ThumbprintSHA256,
		model:      m,
		server:     s,
	}, nil
}

// SessionInput returns the input that connects to this simulator, verifying
// its certificate against CAFile. (A thumbprint works too, but govmomi tries
// the system roots first on every new connection and vcsim logs each refusal.)
func (s *Simulator) SessionInput() SessionInput {
	return SessionInput{Server: s.Server, Username: s.Username, Password: s.Password, CAFile: s.CAFile}
}

// Close stops the server and removes its files.
func (s *Simulator) Close() {
	if s == nil {
		return
	}
	s.server.Close()
	s.model.Remove()
}
