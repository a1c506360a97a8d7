package config

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestOVASHA256AndDownloadBound(t *testing.T) {
	sha := strings.Repeat("ab", 32)
	urlImage := func(src, extra string) func(string) string {
		return replace("      source: ovas/ubuntu.ova\n      generate: {diskMiB: 1}\n", "      source: "+src+"\n"+extra)
	}
	// Defaults: 20Gi; an https URL needs no sha256; an http URL with one is fine.
	for _, m := range []func(string) string{urlImage("https://builds.example/u.ova", ""), urlImage("http://builds.example/u.ova", "      sha256: "+sha+"\n")} {
		cfg, ps := load(t, fixture(t, m), nil)
		if ps != nil {
			t.Fatal(ps.Error())
		}
		if cfg.OVA.MaxDownloadBytes() != 20<<30 {
			t.Errorf("default maxDownloadSize = %d bytes, want 20Gi", cfg.OVA.MaxDownloadBytes())
		}
	}
	_, ps := load(t, fixture(t, urlImage("http://builds.example/u.ova", "")), nil)
	pr := expectProblem(t, ps, "ova.images[0].source", "an http:// OVA source needs its sha256", "add sha256:")
	if pr.Line == 0 {
		t.Errorf("problem has no line: %v", pr)
	}
	// All problems at once: a bad sha256 and a bad bound.
	_, ps = load(t, fixture(t, func(s string) string {
		s = urlImage("https://builds.example/u.ova", "      sha256: abc\n")(s)
		return replace("ova:\n", "ova:\n  maxDownloadSize: 20G\n")(s)
	}), nil)
	expectProblem(t, ps, "ova.images[0].sha256", `"abc" is not a sha256 (64 hex digits)`)
	expectProblem(t, ps, "ova.maxDownloadSize", `"20G" is not a positive size`, "e.g. 20Gi")
	cfg, ps := load(t, fixture(t, replace("ova:\n", "ova:\n  maxDownloadSize: 512Mi\n")), nil)
	if ps != nil || cfg.OVA.MaxDownloadBytes() != 512<<20 {
		t.Fatalf("512Mi: %d, %v", cfg.OVA.MaxDownloadBytes(), ps)
	}
}

func writeCA(t *testing.T, dir string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, NotBefore: time.Now(),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestVSphereCAFile(t *testing.T) {
	vsphere := func(extra string) func(string) string {
		return func(s string) string {
			s = replace("profile: local", "profile: vsphere")(s)
			return replace("  simulator: true\n", "  simulator: false\n  server: vc.example.com\n  username: u\n  password: ${VSPHERE_PASSWORD}\n"+
				"  folder: f\n  datastore: d\n  resourcePool: r\n  network: n\n"+extra)(s)
		}
	}
	vars := map[string]string{"VSPHERE_PASSWORD": "a-long-pw"}
	// Neither thumbprint nor insecure: the system roots are trusted, no problem.
	if _, ps := load(t, fixture(t, vsphere("")), vars); ps != nil {
		for _, p := range ps {
			if strings.HasPrefix(p.Key, "vsphere.") {
				t.Errorf("vsphere problem without thumbprint/insecure: %v", p)
			}
		}
	}
	p := fixture(t, vsphere("  caFile: ca.pem\n"))
	ca := writeCA(t, filepath.Dir(p))
	cfg, ps := load(t, p, vars)
	for _, pr := range ps {
		if strings.HasPrefix(pr.Key, "vsphere.") {
			t.Errorf("valid caFile: %v", pr)
		}
	}
	if cfg != nil && cfg.VSphere.CAFile != ca {
		t.Errorf("caFile = %q, want it resolved against the config file: %s", cfg.VSphere.CAFile, ca)
	}
	if err := os.WriteFile(ca, []byte("not pem\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, ps = load(t, p, vars)
	expectProblem(t, ps, "vsphere.caFile", "holds no PEM certificate", "set tlsThumbprint")
	_, ps = load(t, fixture(t, vsphere("  caFile: /nonexistent/ca.pem\n")), vars)
	expectProblem(t, ps, "vsphere.caFile", "cannot read the CA file", "/nonexistent/ca.pem")
}
