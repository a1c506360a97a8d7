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
	a := annotation(sha, "https://u:p@builds/x/node.ova?sig=1", "Cluster API vSphere image", nil)
	if AnnotationSHA256(a) != sha || !strings.Contains(a, "ova: node.ova\n") || !strings.HasSuffix(a, "\nCluster API vSphere image") {
		t.Errorf("annotation = %q", a)
	}
	if AnnotationSHA256("made by hand") != "" {
		t.Error("found a sha256 in a foreign annotation")
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
