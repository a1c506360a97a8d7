package suites

import (
	"strings"
	"testing"

	"github.com/tkg-e2e/harness/framework/vsphere"
)

// The ova report names each OVA by the identity its template carries: an
// OVA identified by its manifest has no whole-file sha256 to print.
func TestOVAReportShowsTheManifestIdentityWhenThereIsNoSHA256(t *testing.T) {
	sha, mf := strings.Repeat("a", 64), strings.Repeat("b", 64)
	for _, c := range []struct {
		r    vsphere.Result
		want string
	}{
		{vsphere.Result{SHA256: sha, ManifestSHA256: mf}, "sha256:aaaaaaaaaaaa"},
		{vsphere.Result{ManifestSHA256: mf}, "manifest-sha256:bbbbbbbbbbbb"},
		{vsphere.Result{}, "sha256:-"},
	} {
		if got := identityOf(c.r); got != c.want {
			t.Errorf("identityOf(sha256 %q, manifest %q) = %q, want %q", c.r.SHA256, c.r.ManifestSHA256, got, c.want)
		}
	}
}
