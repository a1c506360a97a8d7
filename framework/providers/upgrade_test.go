package providers

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// repository writes a clusterctl config whose file repository has
// cluster-api and docker at the given versions only.
func repository(t *testing.T, versions ...string) string {
	t.Helper()
	dir := t.TempDir()
	const components = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s-system\n"
	const metadata = "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- major: 1\n  minor: 14\n  contract: v1beta2\n- major: 1\n  minor: 13\n  contract: v1beta2\n"
	cfg := "providers:\n"
	for _, p := range []struct{ label, name, typ string }{{"cluster-api", "cluster-api", "CoreProvider"}, {"infrastructure-docker", "docker", "InfrastructureProvider"}} {
		for _, v := range versions {
			d := filepath.Join(dir, p.label, v)
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(d, "components.yaml"), strings.ReplaceAll(components, "%s", p.name))
			write(t, filepath.Join(d, "metadata.yaml"), metadata)
		}
		cfg += "- name: " + p.name + "\n  type: " + p.typ + "\n  url: file://" + filepath.Join(dir, p.label, versions[len(versions)-1], "components.yaml") + "\n"
	}
	path := filepath.Join(dir, "clusterctl.yaml")
	write(t, path, cfg)
	return path
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A clusterctl upgrade target the repository does not have is found
// before anything changes, named with its type and the repository; one it
// has passes.
func TestAnUpgradeTargetNotInTheRepositoryIsNamed(t *testing.T) {
	ctx := context.Background()
	cfg := repository(t, "v1.13.0", "v1.14.0")
	if err := CheckUpgradeTargets(ctx, cfg, Providers{Core: "cluster-api:v1.14.0", Infrastructure: []string{"docker:v1.13.0"}}); err != nil {
		t.Fatalf("versions the repository has: %v", err)
	}
	err := CheckUpgradeTargets(ctx, cfg, Providers{Core: "cluster-api:v1.15.0", Infrastructure: []string{"docker:v1.14.0", "docker"}})
	if err == nil {
		t.Fatal("v1.15.0 is not in the repository, and docker has no version: no error")
	}
	for _, want := range []string{"cluster-api:v1.15.0 (CoreProvider) is not in the clusterctl repository of " + cfg, "provider docker has no version"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "docker:v1.14.0 (InfrastructureProvider)") {
		t.Errorf("docker:v1.14.0 is in the repository:\n%v", err)
	}
}
