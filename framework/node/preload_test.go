package node

import (
	"slices"
	"testing"
)

// A node's listing skips only the images it has with this host's ID: a tag
// whose ID differs (rebuilt here since) is imported again, as LoadImages
// would load it.
func TestPreloadSkipsWhatANodeHasByID(t *testing.T) {
	ids := map[string]string{"busybox:1.36": "sha256:a", "kindest/kapp:v1": "sha256:b", "registry.k8s.io/pause:3.10": "sha256:c"}
	images := []string{"busybox:1.36", "kindest/kapp:v1", "registry.k8s.io/pause:3.10"}
	tags := map[string]string{
		"docker.io/library/busybox:1.36": "sha256:a",
		"docker.io/kindest/kapp:v1":      "sha256:old",
		"registry.k8s.io/coredns:v1":     "sha256:d",
	}
	if got := presentOn(tags, images, ids); !slices.Equal(got, []string{"busybox:1.36"}) {
		t.Errorf("presentOn = %v, want [busybox:1.36]", got)
	}
	if got := presentOn(map[string]string{}, images, ids); got == nil || len(got) != 0 {
		t.Errorf("a new node's empty listing = %#v, want an empty, non-nil list (the node counts as listed)", got)
	}
}
