package cluster

import (
	"encoding/base64"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tkg-e2e/harness/framework/artifacts"
)

// Masking a Secret in the dump is not enough: the value it holds reaches
// logs too, when a controller or a test pod prints its configuration. The
// values of the cluster's Secrets are therefore registered with the
// redactor before any log file of the cluster is written, and masked
// wherever they reappear.
//
// Only values that look like credentials are registered. Secrets also hold
// names, URLs and usernames ("mgmt-cluster-prod", "administrator@vsphere.local"),
// and masking those in every log would hide what the logs are read for.
// Multi-line values (kubeconfigs, cloud-init, certificates) are left to the
// shape rules, which mask the keys and tokens inside them.

const (
	minRegisteredLen = 8
	maxRegisteredLen = 4 << 10
)

func credentialLike(v string) bool {
	if len(v) < minRegisteredLen || len(v) > maxRegisteredLen || strings.ContainsAny(v, " \t\r\n") {
		return false
	}
	var digitOrUpper, nonDigit bool
	for _, r := range v {
		if unicode.IsDigit(r) || unicode.IsUpper(r) {
			digitOrUpper = true
		}
		if !unicode.IsDigit(r) {
			nonDigit = true
		}
	}
	return digitOrUpper && nonDigit
}

// secretValues returns the credential-like values of a list of Secrets (as
// listed, before sanitize masks them).
func secretValues(items []unstructured.Unstructured) []string {
	var out []string
	for i := range items {
		data, _, _ := unstructured.NestedStringMap(items[i].Object, "data")
		for _, enc := range data {
			b, err := base64.StdEncoding.DecodeString(enc)
			if err == nil && credentialLike(string(b)) {
				out = append(out, string(b))
			}
		}
		plain, _, _ := unstructured.NestedStringMap(items[i].Object, "stringData")
		for _, v := range plain {
			if credentialLike(v) {
				out = append(out, v)
			}
		}
	}
	return out
}

// finish closes a file written from the node side, or keeps it open until
// the cluster's Secret values are registered: node items start at once, so
// that a dead API does not delay them, and would otherwise be redacted
// without those values.
func (c *collection) finish(f *artifacts.File) error {
	c.pmu.Lock()
	if !c.secretsDone {
		c.pending = append(c.pending, f)
		c.pmu.Unlock()
		return nil
	}
	c.pmu.Unlock()
	return f.Close()
}

// secretsRegistered is called once the Secrets were read, or could not be;
// it closes the files that waited for it.
func (c *collection) secretsRegistered() {
	c.pmu.Lock()
	c.secretsDone = true
	pending := c.pending
	c.pending = nil
	c.pmu.Unlock()
	for _, f := range pending {
		if err := f.Close(); err != nil {
			c.r.Fail("write "+f.Rel(), err)
		}
	}
}
