package infrastructure_test

import (
	"slices"
	"testing"

	"github.com/tkg-e2e/harness/framework/infrastructure"
)

func TestParseKeepsTheVersionForClusterctlOnly(t *testing.T) {
	for _, tc := range []struct {
		in, name, provider string
		same               infrastructure.Infrastructure
	}{
		{"docker", "docker", "docker", infrastructure.Docker},
		{"docker:v1.14.0", "docker", "docker:v1.14.0", infrastructure.Docker},
		{" vsphere:v1.16.1 ", "vsphere", "vsphere:v1.16.1", infrastructure.VSphere},
		{"kind", "kind", "kind", infrastructure.KindCluster},
	} {
		i := infrastructure.Parse(tc.in)
		if i.Name() != tc.name || i.Provider() != tc.provider || !infrastructure.Same(i, tc.same) {
			t.Errorf("Parse(%q) = %s (%s), want %s (%s), the same as %s", tc.in, i.Name(), i.Provider(), tc.name, tc.provider, tc.same.Name())
		}
		if i.NodesAreContainers() != tc.same.NodesAreContainers() || i.NodesInVCenter() != tc.same.NodesInVCenter() ||
			i.NeedsFlavor() != tc.same.NeedsFlavor() {
			t.Errorf("Parse(%q) lost the traits of %s", tc.in, tc.same.Name())
		}
	}
}

// A provider no infrastructure registered is still a provider (clusterctl
// may know it), with no trait the harness acts on.
func TestParseOfAnUnknownProvider(t *testing.T) {
	i := infrastructure.Parse("aws:v2.0.0")
	if i.Name() != "aws" || i.Provider() != "aws:v2.0.0" || i.NodesAreContainers() || i.NodesInVCenter() || i.NeedsFlavor() {
		t.Errorf("Parse(aws:v2.0.0) = %+v", i)
	}
	if infrastructure.IsKnown("aws") || !infrastructure.IsKnown("docker:v1.14.0") {
		t.Error("IsKnown: aws is not registered, docker is")
	}
	if infrastructure.Same(i, nil) || infrastructure.Same(nil, nil) {
		t.Error("Same(x, nil) must be false")
	}
}

// A scratch infrastructure is one value and one Register call; Parse then
// gives it, with its version, and its traits reach whoever asks.
func TestRegisterAScratchInfrastructure(t *testing.T) {
	scratch := infrastructure.Kind{ClusterctlName: "scratch-metal", Containers: true}
	infrastructure.Register(scratch)
	i := infrastructure.Parse("scratch-metal:v0.1.0")
	if !infrastructure.Same(i, scratch) || !i.NodesAreContainers() || i.Provider() != "scratch-metal:v0.1.0" {
		t.Errorf("Parse(scratch-metal:v0.1.0) = %+v", i)
	}
	if !slices.Contains(infrastructure.Known(), "scratch-metal") {
		t.Errorf("Known() = %v lacks scratch-metal", infrastructure.Known())
	}
	defer func() {
		if recover() == nil {
			t.Error("a second Register of one name must panic")
		}
	}()
	infrastructure.Register(infrastructure.Kind{ClusterctlName: "docker"})
}
