package suites_test

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/suites"
	"github.com/tkg-e2e/harness/suites/lifecycle"
)

// Checks compare against the version a cluster should have now: the one
// it was created at, until an upgrade records the one it took it to (in
// state.json, so a resumed run's health expects it too).
func TestTheVersionAClusterShouldHaveNow(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	t.Setenv("PREVIOUS_KUBERNETES_VERSION", "v1.32.5")
	t.Setenv("KUBERNETES_VERSION", "v1.33.1")
	env, err := suites.NewEnv(suites.EnvOptions{Registry: lifecycle.Registry, ConfigPath: "../config/local.yaml",
		ArtifactFolder: filepath.Join(t.TempDir(), "20261126-101500-k3f9a"), Out: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer env.State.Close()
	u, _ := env.Config.ClusterOf(config.IDUpgrade)
	c := &suites.Cluster{ID: config.IDUpgrade, Role: suites.RoleWorkload, Name: u.Name, Namespace: u.Namespace}
	if got := env.KubernetesVersionNow(c); got != "v1.32.5" {
		t.Errorf("before the upgrade: %s, want the version it was created at", got)
	}
	r := run.Resource{Kind: "capi-cluster", Namespace: u.Namespace, Name: u.Name, Role: suites.RoleWorkload, Cluster: config.IDUpgrade, State: "ready"}
	if err := env.State.PutResource(r); err != nil {
		t.Fatal(err)
	}
	if err := env.State.SetResourceAttribute(r.Key(), suites.AttrKubernetesVersion, "v1.33.1"); err != nil {
		t.Fatal(err)
	}
	if got := env.KubernetesVersionNow(c); got != "v1.33.1" {
		t.Errorf("after the upgrade: %s, want v1.33.1", got)
	}
}
