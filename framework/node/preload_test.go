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

// Most pods the images are for run on workers, and a day-two change waits
// on its new nodes: a new worker, then a new control plane, then the old
// nodes; a worker that appears while the control plane is being served
// takes the next import.
func TestPreloadServesNewNodesAndWorkersFirstOneImageAtATime(t *testing.T) {
	cps := map[string]bool{"m-cp-1": true, "m-cp-old": true}
	if got := preloadOrder([]string{"m-cp-1", "m-md-0-b", "m-md-0-a"}, cps, map[string]bool{}); !slices.Equal(got, []string{"m-md-0-b", "m-md-0-a", "m-cp-1"}) {
		t.Errorf("preloadOrder of a new cluster = %v, want the workers in the order given, then the control plane", got)
	}
	old := map[string]bool{"m-cp-old": true, "m-md-0-old": true}
	if got := preloadOrder([]string{"m-cp-1", "m-cp-old", "m-md-0-old", "m-md-0-new"}, cps, old); !slices.Equal(got, []string{"m-md-0-new", "m-cp-1", "m-md-0-old", "m-cp-old"}) {
		t.Errorf("preloadOrder of a rollout = %v, want the new worker, the new control plane, then the old worker and control plane", got)
	}
	images := []string{"a:1", "b:1", "c:1"}
	if im, ok := nextMissing(images, []string{"a:1"}, []string{"b:1"}); !ok || im != "c:1" {
		t.Errorf("nextMissing = %q %v, want c:1 (a imported, b had)", im, ok)
	}
	if im, ok := nextMissing(images, []string{"a:1", "c:1"}, []string{"b:1"}); ok {
		t.Errorf("nextMissing of a node with everything = %q", im)
	}
	if im, ok := nextMissing(images, nil, nil); !ok || im != "a:1" {
		t.Errorf("nextMissing of a new node = %q %v, want a:1 (the order given: a rollout's own images first)", im, ok)
	}
}
