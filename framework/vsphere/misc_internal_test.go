package vsphere

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestTransferLineShowsBytesRateAndETA(t *testing.T) {
	tr := &transfer{r: &reporter{}, verb: "uploading", what: "d.vmdk", total: 200 << 20, start: time.Now().Add(-2 * time.Second)}
	tr.add(100 << 20)
	line := tr.line()
	re := regexp.MustCompile(`^uploading d\.vmdk 100\.0 MiB / 200\.0 MiB \(50%\), (4[89]|50)\.\d MiB/s, ETA 2s$`)
	if !re.MatchString(line) {
		t.Errorf("line = %q", line)
	}
}

func TestAnnotationCarriesTheSHAAndKeepsTheOVFText(t *testing.T) {
	sha := strings.Repeat("ab", 32)
	a := annotation(identity{SHA256: sha}, "https://u:p@builds/x/node.ova?sig=1", "Cluster API vSphere image", nil)
	if AnnotationSHA256(a) != sha || AnnotationManifestSHA256(a) != "" || !strings.Contains(a, "ova: node.ova\n") || !strings.HasSuffix(a, "\nCluster API vSphere image") {
		t.Errorf("annotation = %q", a)
	}
	if AnnotationSHA256("made by hand") != "" || AnnotationManifestSHA256("made by hand") != "" {
		t.Error("found an OVA identity in a foreign annotation")
	}
}

// Each identity has its own line, and one is never read as the other.
func TestAnnotationCarriesEachIdentityOnItsOwnLine(t *testing.T) {
	sha, mf := strings.Repeat("ab", 32), strings.Repeat("CD", 32)
	for _, id := range []identity{{Manifest: mf}, {SHA256: sha, Manifest: mf}} {
		a := annotation(id, "node.ova", "", nil)
		if got := annotationIdentity(a); got.SHA256 != id.SHA256 || got.Manifest != strings.ToLower(mf) {
			t.Errorf("annotation %q reads as %+v, want %+v", a, got, id)
		}
	}
	if a := annotation(identity{Manifest: mf}, "node.ova", "", nil); !strings.Contains(a, "\nova-manifest-sha256: "+mf+"\n") || strings.Contains(a, "ova-sha256:") {
		t.Errorf("annotation = %q", a)
	}
}

// compare uses the first identity both sides know, the whole-file sha256
// first; none shared is no answer rather than "different".
func TestIdentityCompareUsesTheFirstIdentityBothKnow(t *testing.T) {
	a, b := strings.Repeat("a", 64), strings.Repeat("b", 64)
	for _, c := range []struct {
		x, y        identity
		same, known bool
		basis       string
	}{
		{identity{SHA256: a, Manifest: a}, identity{SHA256: a, Manifest: b}, true, true, onSHA256},
		{identity{SHA256: a, Manifest: a}, identity{SHA256: b, Manifest: a}, false, true, onSHA256},
		{identity{Manifest: a}, identity{SHA256: b, Manifest: a}, true, true, onManifest},
		{identity{Manifest: a}, identity{Manifest: b}, false, true, onManifest},
		{identity{Manifest: a}, identity{SHA256: a}, false, false, ""},
		{identity{}, identity{SHA256: a, Manifest: a}, false, false, ""},
	} {
		same, basis, known := c.x.compare(c.y)
		if same != c.same || basis != c.basis || known != c.known {
			t.Errorf("%v vs %v: same %v on %q (known %v), want %v on %q (%v)", c.x, c.y, same, basis, known, c.same, c.basis, c.known)
		}
	}
}

func TestServerURLDropsCredentialsAndDefaultsTheSDKPath(t *testing.T) {
	for in, want := range map[string]string{
		"vc.example.com":                 "https://vc.example.com/sdk",
		"vc.example.com:8443":            "https://vc.example.com:8443/sdk",
		"https://user:pw@vc.example.com": "https://vc.example.com/sdk",
	} {
		u, err := serverURL(in)
		if err != nil || u.String() != want {
			t.Errorf("serverURL(%q) = %v, %v; want %s", in, u, err, want)
		}
	}
}

func TestDisplaySourceHidesURLSecrets(t *testing.T) {
	if got := displaySource("https://u:p@h/a/b.ova?X-Amz-Signature=s"); got != "https://h/a/b.ova" {
		t.Errorf("got %q", got)
	}
}
