package node

import (
	"context"
	"fmt"
	"sync"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"
)

// Cluster API's container.Runtime cannot list networks, tell an image's ID
// (it only says whether an image exists), nor a container's ID, labels and
// creation time (owner.go: what makes a container a run's). These calls go to
// the same Docker API through the moby client the Runtime itself is built
// on, created the same way (client.FromEnv).
var dockerAPI = sync.OnceValues(func() (*client.Client, error) { return client.New(client.FromEnv) })

// Networks lists docker network names (through the Inventory in the
// context, if any).
func Networks(ctx context.Context) ([]string, error) { return inventory(ctx).Networks(ctx) }

func dockerNetworks(ctx context.Context) ([]string, error) {
	cli, err := dockerAPI()
	if err != nil {
		return nil, fmt.Errorf("docker: %w", err)
	}
	res, err := cli.NetworkList(ctx, client.NetworkListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing docker networks: %w", err)
	}
	out := make([]string, 0, len(res.Items))
	for _, n := range res.Items {
		out = append(out, n.Name)
	}
	return out, nil
}

// localImageID returns the ID of a local image, or "" when it is not present.
func localImageID(ctx context.Context, ref string) (string, error) {
	cli, err := dockerAPI()
	if err != nil {
		return "", fmt.Errorf("docker: %w", err)
	}
	res, err := cli.ImageInspect(ctx, ref)
	if err != nil {
		if cerrdefs.IsNotFound(err) && ctx.Err() == nil {
			return "", nil
		}
		return "", fmt.Errorf("docker image inspect %s: %w", ref, err)
	}
	return res.ID, nil
}

// ImagePresent returns an error naming an image that is not on this Docker
// host, for preflights: a missing image found before any cluster exists.
func ImagePresent(ctx context.Context, ref string) error {
	id, err := localImageID(ctx, ref)
	if err != nil {
		return err
	}
	if id == "" {
		return fmt.Errorf("image %s is not on this Docker host: prepare it with make testbed (the kit loads it), or pull it on a machine with registry access", ref)
	}
	return nil
}
