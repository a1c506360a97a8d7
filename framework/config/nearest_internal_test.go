package config

import (
	"testing"

	"go.yaml.in/yaml/v3"
)

// A problem about a key no file sets points at the closest enclosing key a
// file sets, else at the profile: never at an empty file name.
func TestProblemsPointAtTheNearestKeyAFileSets(t *testing.T) {
	idx := nodeIndex{
		"clusters.management": {file: "config/vsphere.yaml", node: &yaml.Node{Line: 110}},
		"ova.images[0]":       {file: "site.yaml", node: &yaml.Node{Line: 4}},
		"profile":             {file: "config/vsphere.yaml", node: &yaml.Node{Line: 1}},
	}
	for key, want := range map[string]string{
		"clusters.management.variables.CONTROL_PLANE_ENDPOINT_IP": "config/vsphere.yaml:110",
		"ova.images[0].sha256":     "site.yaml:4",
		"vsphere.sshAuthorizedKey": "config/vsphere.yaml",
	} {
		p := idx.nearest(key, "config/vsphere.yaml").problem(key, "m", "")
		loc := p.File
		if p.Line > 0 {
			loc = p.String()[:len(p.String())-len(": "+key+": m")]
		}
		if loc != want {
			t.Errorf("%s: located at %q, want %q (%s)", key, loc, want, p)
		}
	}
}
