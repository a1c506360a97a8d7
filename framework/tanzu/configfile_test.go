package tanzu

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/tkg-e2e/harness/framework/assert/asserttest"
	"github.com/tkg-e2e/harness/framework/redact"
)

func TestConfigFileIsPrivateFlatAndRemoved(t *testing.T) {
	f := newFixture(t)
	cf := f.config("tkg-mgmt-vc")
	st, err := os.Stat(cf.Path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("file mode %o, want 600", st.Mode().Perm())
	}
	dst, _ := os.Stat(filepath.Dir(cf.Path))
	if dst.Mode().Perm() != 0o700 {
		t.Errorf("folder mode %o, want 700", dst.Mode().Perm())
	}
	if inside, _ := within(cf.Path, f.artifacts); inside {
		t.Errorf("%s is inside the artifacts folder", cf.Path)
	}
	b, _ := os.ReadFile(cf.Path)
	var back map[string]string
	if err := yaml.Unmarshal(b, &back); err != nil || back["VSPHERE_PASSWORD"] != testPassword || back["CLUSTER_NAME"] != "tkg-mgmt-vc" {
		t.Errorf("file does not read back as flat KEY: value (%v): %s", err, b)
	}
	// Registered before the CLI could echo it.
	if got := f.red.String("echo " + testPassword); strings.Contains(got, testPassword) {
		t.Errorf("the password is not registered with the redactor: %q", got)
	}
	if err := cf.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(cf.Path)); !os.IsNotExist(err) {
		t.Errorf("after Remove the folder is still there: %v", err)
	}
	if err := cf.Remove(); err != nil {
		t.Errorf("second Remove: %v", err)
	}
}

func TestConfigFileRefusesArtifactsAndMissingKeys(t *testing.T) {
	root := t.TempDir()
	artifacts := filepath.Join(root, "artifacts")
	link := filepath.Join(root, "work-link")
	if err := os.MkdirAll(filepath.Join(artifacts, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(artifacts, "sub"), link); err != nil {
		t.Fatal(err)
	}
	vals := map[string]string{"CLUSTER_NAME": "c", "CLUSTER_PLAN": "dev", "INFRASTRUCTURE_PROVIDER": "vsphere", "VSPHERE_PASSWORD": testPassword}
	for _, dir := range []string{artifacts, filepath.Join(artifacts, "sub", "new"), link} {
		_, err := WriteConfigFile(ConfigFileInput{Dir: dir, ArtifactsDir: artifacts, Values: vals, Redactor: redact.New()})
		if err == nil {
			t.Fatalf("Dir %s accepted", dir)
		}
		asserttest.Says(t, "error", err.Error(), "inside the artifacts folder", "VSPHERE_SERVER, VSPHERE_USERNAME, VSPHERE_DATACENTER")
		asserttest.SaysNot(t, "error", err.Error(), testPassword)
	}
	_, err := WriteConfigFile(ConfigFileInput{Dir: filepath.Join(root, "ok"), ArtifactsDir: artifacts,
		Values: map[string]string{"cluster-name": "x"}})
	asserttest.Says(t, "error", err.Error(), "CLUSTER_NAME, CLUSTER_PLAN, INFRASTRUCTURE_PROVIDER", `"cluster-name"`, "Redactor is required")
	if ents, _ := os.ReadDir(artifacts); len(ents) != 1 {
		t.Errorf("refused writes left %d entries in the artifacts folder", len(ents))
	}
}
