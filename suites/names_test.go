package suites_test

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/suites"
)

// A run's clusters carry its short ID; a resumed run keeps the names its
// state recorded, even when the profile's names changed since.
func TestRunClusterNamesCarryTheShortID(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	for _, v := range []string{"KIND_CLUSTER_NAME", "MANAGEMENT_CLUSTER_NAME", "WORKLOAD_CLUSTER_NAME", "UNIQUE_CLUSTER_NAMES"} {
		t.Setenv(v, "") // restored after the test
		os.Unsetenv(v)
	}
	folder := filepath.Join(t.TempDir(), "20261122-101500-k3f9a")
	env, err := suites.NewEnv(suites.EnvOptions{Registry: suites.Lifecycle, ConfigPath: "../config/local.yaml", ArtifactFolder: folder, Out: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	c := env.Config.Clusters
	if env.State.ShortID() != "k3f9a" || c.Bootstrap.Name != "tkg-e2e-kind-k3f9a" || c.Management.Name != "tkg-e2e-mgmt-k3f9a" ||
		c.Workload.Name != "tkg-e2e-wl-k3f9a" {
		t.Fatalf("short %s, names %s %s %s", env.State.ShortID(), c.Bootstrap.Name, c.Management.Name, c.Workload.Name)
	}
	if err := env.State.PutResource(run.Resource{Kind: "capi-cluster", Namespace: "tkg-system", Name: "tkg-e2e-mgmt-k3f9a",
		Role: suites.RoleManagement, State: "ready"}); err != nil {
		t.Fatal(err)
	}
	if err := env.State.Close(); err != nil {
		t.Fatal(err)
	}

	t.Setenv("MANAGEMENT_CLUSTER_NAME", "renamed")
	env, err = suites.NewEnv(suites.EnvOptions{Registry: suites.Lifecycle, ConfigPath: "../config/local.yaml", ArtifactFolder: folder,
		Resume: true, Out: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer env.State.Close()
	if c := env.Config.Clusters; c.Management.Name != "tkg-e2e-mgmt-k3f9a" || c.Workload.Name != "tkg-e2e-wl-k3f9a" {
		t.Fatalf("resumed names %s %s", c.Management.Name, c.Workload.Name)
	}
}
