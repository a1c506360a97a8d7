package suites

import (
	"testing"

	"github.com/tkg-e2e/harness/framework/config"
)

// clusterctl takes an infrastructure provider with its version
// ("docker:v1.14.0"); the harness must treat it as the provider it names.
// Comparing the configured string turned off image loading and node-log
// collection for CAPD clusters configured that way.
func TestVersionedInfrastructureProviderIsTheSameProvider(t *testing.T) {
	for _, configured := range []string{"docker", "docker:v1.14.0"} {
		cfg := &config.Config{}
		cfg.Clusterctl.InfrastructureProviders = []string{configured}
		if got := infraName(cfg); got != "docker" {
			t.Errorf("%s: infraName = %q, want docker", configured, got)
		}
		if c := (&Cluster{Provider: infraName(cfg)}); !c.DockerNodes() {
			t.Errorf("%s: a CAPD cluster must have Docker nodes", configured)
		}
		if got := infraProvider(cfg); got != configured {
			t.Errorf("clusterctl must get %q as configured, got %q", configured, got)
		}
	}
	if c := (&Cluster{Provider: "vsphere"}); c.DockerNodes() {
		t.Error("a CAPV cluster has no Docker nodes")
	}
}
