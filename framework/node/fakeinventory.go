package node

import (
	"context"
	"slices"
	"sync"

	"sigs.k8s.io/cluster-api/test/infrastructure/container"
)

// FakeInventory is an Inventory for tests: a fixed set of containers and
// networks. With Runtime set (Cluster API's FakeRuntime), a container whose
// ID or name the Runtime was asked to delete is no longer listed.
type FakeInventory struct {
	mu         sync.Mutex
	Containers []ContainerInfo
	Nets       []string
	Runtime    *container.FakeRuntime
}

// ListByLabel implements Inventory.
func (f *FakeInventory) ListByLabel(_ context.Context, key, value string) ([]ContainerInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var deleted []string
	if f.Runtime != nil {
		deleted = f.Runtime.DeleteContainerCalls()
	}
	var out []ContainerInfo
	for _, c := range f.Containers {
		if c.Labels[key] == value && !slices.Contains(deleted, c.ID) && !slices.Contains(deleted, c.Name) {
			out = append(out, c)
		}
	}
	return out, nil
}

// Networks implements Inventory.
func (f *FakeInventory) Networks(context.Context) ([]string, error) { return f.Nets, nil }
