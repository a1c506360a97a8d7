package bootstrap

import (
	"strings"
	"testing"

	"sigs.k8s.io/cluster-api/test/framework/clusterctl"
)

func TestCreateKindClusterRejectsDigestsAndMissingState(t *testing.T) {
	_, err := CreateKindCluster(t.Context(), CreateKindClusterInput{Name: "h4e-boot",
		NodeImage: "kindest/node:v1.33.1@sha256:0123", KubeconfigPath: "/tmp/x"})
	for _, want := range []string{"digest reference; pass it by tag", "State is nil", "Timeout"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
}

func TestValidateName(t *testing.T) {
	for name, ok := range map[string]bool{"h4e-boot": true, "": false, "-x": false, "UPPER": false, strings.Repeat("a", 41): false} {
		if err := ValidateName("Name", name); (err == nil) != ok {
			t.Errorf("ValidateName(%q) = %v, want ok=%v", name, err, ok)
		}
	}
}

func TestLoadImagesValidatesBehaviour(t *testing.T) {
	_, err := LoadImages(t.Context(), LoadImagesInput{ClusterName: "x", Timeout: 1,
		Images: []clusterctl.ContainerImage{{Name: "a", LoadBehavior: "sometimes"}}})
	if err == nil || !strings.Contains(err.Error(), `loadBehavior "sometimes" is not "mustLoad" or "tryLoad"`) {
		t.Fatalf("got %v", err)
	}
}

func TestProvidersDefaults(t *testing.T) {
	p := Providers{Infrastructure: []string{"docker"}}.WithDefaults()
	if p.Core != "cluster-api" || p.Bootstrap[0] != "kubeadm" || p.ControlPlane[0] != "kubeadm" {
		t.Fatalf("%+v", p)
	}
}
