// Package capvtest gives tests the files of the CAPV release the kit builds
// and the vSphere profile targets, from the module cache (downloaded from
// the proxy if needed): the harness never imports CAPV's Go code, but its
// tests hold the profile and the vcsim flavor to CAPV's own templates.
package capvtest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Module is the pinned CAPV release.
const Module = "sigs.k8s.io/cluster-api-provider-vsphere@v1.16.1"

// Template returns templates/<name> of the pinned release, e.g.
// cluster-template.yaml.
func Template(t testing.TB, name string) []byte {
	t.Helper()
	out, err := exec.Command("go", "mod", "download", "-json", Module).Output()
	if err != nil {
		t.Fatalf("go mod download %s: %v (the test reads CAPV's own template; the module proxy serves this version)", Module, err)
	}
	var m struct{ Dir string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		t.Fatalf("go mod download -json %s: no Dir in %s", Module, out)
	}
	b, err := os.ReadFile(filepath.Join(m.Dir, "templates", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
