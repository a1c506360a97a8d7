package suites_test

import (
	"strings"
	"testing"

	"github.com/tkg-e2e/harness/suites"
)

// The shipped local profile loads into each cluster only what runs there
// (images[].roles): the workload cluster gets no Cluster API controller and
// no cert-manager, which must not run there (placement/local.yaml).
func TestLocalProfileImagesPerRole(t *testing.T) {
	env := localEnv(t)
	names := func(role string) string {
		var out []string
		for _, im := range suites.Images(env.Config, role) {
			out = append(out, im.Name)
		}
		return strings.Join(out, " ")
	}
	if got := names(suites.RoleWorkload); got != "ghcr.io/carvel-dev/kapp-controller:v0.51.0 busybox:1.35.0 registry.k8s.io/kube-proxy:v1.33.1" {
		t.Errorf("workload images: %s", got)
	}
	if got := suites.Images(env.Config, suites.RoleManagement); len(got) != 10 {
		t.Errorf("management images: %d, want all 10", len(got))
	}
	if got := names(suites.RoleBootstrap); strings.Contains(got, "kapp-controller") || !strings.Contains(got, "capd-manager") {
		t.Errorf("bootstrap images: %s", got)
	}
}
