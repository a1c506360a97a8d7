package node

import "testing"

// The one listing per node is matched by the names containerd gives images:
// a short name must find its image there, or every image is reloaded.
func TestNormalizedTagIsContainerdsName(t *testing.T) {
	for in, want := range map[string]string{
		"busybox:1.36":               "docker.io/library/busybox:1.36",
		"busybox":                    "docker.io/library/busybox:latest",
		"kindest/node:v1.33.1":       "docker.io/kindest/node:v1.33.1",
		"registry.k8s.io/pause:3.10": "registry.k8s.io/pause:3.10",
		"gcr.io/k8s-staging-cluster-api/capd-manager-amd64:v1.14.0": "gcr.io/k8s-staging-cluster-api/capd-manager-amd64:v1.14.0",
		"docker.io/library/busybox:1.36":                            "docker.io/library/busybox:1.36",
		"Not A Reference":                                           "Not A Reference",
	} {
		if got := normalizedTag(in); got != want {
			t.Errorf("normalizedTag(%q) = %q, want %q", in, got, want)
		}
	}
}
