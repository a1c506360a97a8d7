package suites_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tkg-e2e/harness/framework/infrastructure"
	"github.com/tkg-e2e/harness/suites"
)

// clusterctl takes an infrastructure provider with its version
// ("docker:v1.14.0"); the harness must treat it exactly as the provider it
// names. Comparing the configured string once turned off image loading and
// node-log collection for CAPD clusters configured that way.
func TestVersionedInfrastructureProviderIsTheSameProvider(t *testing.T) {
	type seen struct {
		name, clusterctl                         string
		containers, vcenter, flavor, dockerNodes bool
		images                                   int
	}
	look := func(configured string) seen {
		override := filepath.Join(t.TempDir(), "infra.yaml")
		if err := os.WriteFile(override, []byte("clusterctl:\n  infrastructureProviders: ["+configured+"]\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		env := localEnv(t, override)
		in := suites.ClusterInput(env, "management", suites.RoleManagement, suites.RoleBootstrap, true)
		c := &suites.Cluster{Role: suites.RoleManagement, Infrastructure: in.Infrastructure}
		i := in.Infrastructure
		return seen{name: i.Name(), clusterctl: i.Provider(), containers: i.NodesAreContainers(), vcenter: i.NodesInVCenter(),
			flavor: i.NeedsFlavor(), dockerNodes: c.DockerNodes(), images: len(in.Images)}
	}
	plain, pinned := look("docker"), look("docker:v1.14.0")
	if pinned.clusterctl != "docker:v1.14.0" || plain.clusterctl != "docker" {
		t.Errorf("clusterctl must get the provider as configured: got %q and %q", plain.clusterctl, pinned.clusterctl)
	}
	pinned.clusterctl = plain.clusterctl
	if pinned != plain {
		t.Errorf("[docker:v1.14.0] must behave as [docker]:\n got  %+v\n want %+v", pinned, plain)
	}
	if !plain.containers || !plain.dockerNodes || plain.images == 0 || !plain.flavor || plain.vcenter {
		t.Errorf("a CAPD cluster has its nodes in Docker, images to load and a required flavor: %+v", plain)
	}
	if c := (&suites.Cluster{Infrastructure: infrastructure.Parse("vsphere:v1.16.1")}); c.DockerNodes() || !c.Infrastructure.NodesInVCenter() {
		t.Error("a CAPV cluster has no Docker nodes; its nodes are VMs in vCenter")
	}
}
