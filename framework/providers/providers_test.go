package providers

import (
	"strings"
	"testing"
)

func TestProvidersDefaults(t *testing.T) {
	p := Providers{Infrastructure: []string{"docker"}}.WithDefaults()
	if p.Core != "cluster-api" || p.Bootstrap[0] != "kubeadm" || p.ControlPlane[0] != "kubeadm" {
		t.Fatalf("%+v", p)
	}
}

func TestInitNamesEachMissingTimeout(t *testing.T) {
	_, err := Init(t.Context(), InitInput{})
	for _, want := range []string{"KubeconfigPath is empty", "Providers.Infrastructure is empty", "InitTimeout must be > 0", "Ready must be > 0"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
}

// The bootstrap cluster mounts the Docker socket for CAPD, pinned or not.
func TestMakesContainerNodes(t *testing.T) {
	for in, want := range map[string]bool{"docker": true, "docker:v1.14.0": true, "vsphere": false, "vsphere:v1.16.1": false} {
		if got := (Providers{Infrastructure: []string{in}}).MakesContainerNodes(); got != want {
			t.Errorf("[%s]: MakesContainerNodes = %v, want %v", in, got, want)
		}
	}
}
