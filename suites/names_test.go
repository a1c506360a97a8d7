package suites_test

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/suites"
	"github.com/tkg-e2e/harness/suites/lifecycle"
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
	env, err := suites.NewEnv(suites.EnvOptions{Registry: lifecycle.Registry, ConfigPath: "../config/local.yaml", ArtifactFolder: folder, Out: io.Discard})
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
	env, err = suites.NewEnv(suites.EnvOptions{Registry: lifecycle.Registry, ConfigPath: "../config/local.yaml", ArtifactFolder: folder,
		Resume: true, Out: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer env.State.Close()
	if c := env.Config.Clusters; c.Management.Name != "tkg-e2e-mgmt-k3f9a" || c.Workload.Name != "tkg-e2e-wl-k3f9a" {
		t.Fatalf("resumed names %s %s", c.Management.Name, c.Workload.Name)
	}
}

// Two runs at once whose artifacts folders share a base name share a run
// ID, never their private folder (kubeconfigs, clusterctl configs, the
// tanzu CLI's home): the tanzu driver's failure cases, run side by side
// with ARTIFACTS=<case>/art, broke each other's CLI home before. A run with
// a standard ID keeps the folder it always had; a kept run of an older
// version keeps its folder named by the run ID alone.
func TestRunsWithTheSameFolderNameHaveTheirOwnPrivateFolder(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("HOME", t.TempDir())
	open := func(folder string, resume bool) *suites.Env {
		t.Helper()
		env, err := suites.NewEnv(suites.EnvOptions{Registry: lifecycle.Registry, ConfigPath: "../config/local.yaml", ArtifactFolder: folder,
			Resume: resume, Out: io.Discard})
		if err != nil {
			t.Fatal(err)
		}
		return env
	}
	a, b := open(filepath.Join(t.TempDir(), "art"), false), open(filepath.Join(t.TempDir(), "art"), false)
	defer a.State.Close()
	defer b.State.Close()
	if a.State.RunID != b.State.RunID || a.KubeconfigDir == b.KubeconfigDir {
		t.Fatalf("runs %s and %s: private folders %s and %s", a.State.RunID, b.State.RunID, a.KubeconfigDir, b.KubeconfigDir)
	}
	std := open(filepath.Join(t.TempDir(), "20261122-101500-k3f9a"), false)
	if want := filepath.Join(cache, "tkg-e2e", "20261122-101500-k3f9a"); std.KubeconfigDir != want {
		t.Errorf("standard run ID: private folder %s, want %s", std.KubeconfigDir, want)
	}
	_ = std.State.Close()

	// A kept run of an older version: its folder has the run ID only.
	kept := filepath.Join(t.TempDir(), "kept")
	old := open(kept, false)
	if err := old.State.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(old.KubeconfigDir); err != nil {
		t.Fatal(err)
	}
	legacy := filepath.Join(cache, "tkg-e2e", "kept")
	if err := os.MkdirAll(legacy, 0o700); err != nil {
		t.Fatal(err)
	}
	resumed := open(kept, true)
	defer resumed.State.Close()
	if resumed.KubeconfigDir != legacy {
		t.Errorf("resumed older run: private folder %s, want its own %s", resumed.KubeconfigDir, legacy)
	}
}
