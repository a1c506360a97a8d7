package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/cluster-api/test/framework/clusterctl"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"

	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/framework/wait"
)

// LoadImagesInput is the input of LoadImages.
type LoadImagesInput struct {
	// ClusterName is a kind cluster or a CAPD Cluster: both label their node
	// containers io.x-k8s.kind.cluster=<name>.
	ClusterName string
	// Images with their load behaviour, as in Cluster API's E2EConfig:
	// mustLoad (default) fails when an image cannot be loaded, tryLoad warns and
	// leaves it to the node to pull.
	Images []clusterctl.ContainerImage
	// Pull images that are not present locally before loading them (a machine
	// with registry access). Without it a missing mustLoad image fails at once.
	Pull bool
	// Timeout bounds the whole load.
	Timeout  time.Duration
	Progress io.Writer
	Prefix   string

	// saved are archives a Preload already saved, by image name: the
	// top-up imports them instead of saving the image again.
	saved map[string]string
}

func (in LoadImagesInput) validate() error {
	var errs []string
	if in.ClusterName == "" {
		errs = append(errs, "ClusterName is empty")
	}
	if len(in.Images) == 0 {
		errs = append(errs, "Images is empty (nothing to load; pass the config's images)")
	}
	for _, im := range in.Images {
		if im.Name == "" {
			errs = append(errs, "an image has no name")
		}
		switch im.LoadBehavior {
		case "", clusterctl.MustLoadImage, clusterctl.TryLoadImage:
		default:
			errs = append(errs, fmt.Sprintf("image %s: loadBehavior %q is not %q or %q", im.Name, im.LoadBehavior,
				clusterctl.MustLoadImage, clusterctl.TryLoadImage))
		}
	}
	errs = append(errs, wait.Timeouts{"Timeout": in.Timeout}.Missing("")...)
	return wait.Invalid("node.LoadImages", errs)
}

// LoadImagesResult says what happened to each image.
type LoadImagesResult struct {
	// Nodes the images were loaded into.
	Nodes []string
	// Loaded images (imported into at least one node).
	Loaded []string
	// Present images were already on every node with the same ID.
	Present []string
	// Warnings are tryLoad images that could not be loaded, with the reason.
	Warnings []string
	// Preloaded counts the image imports a Preload did before LoadImages
	// ran (over all nodes); those images are then among Present.
	Preloaded int
}

// AttrPreloaded is the state attribute of a cluster that holds
// LoadImagesResult.Preloaded: CI reads from it that the head start worked
// (the preload never fails a run, so a broken one would only be slower).
const AttrPreloaded = "preloadedImages"

// RecordPreloaded sets AttrPreloaded of the cluster resource key to what
// res says the preload did.
func RecordPreloaded(s *run.State, key string, res *LoadImagesResult) error {
	return s.SetResourceAttribute(key, AttrPreloaded, strconv.Itoa(res.Preloaded))
}

type image struct {
	name, id string
	must     bool
	// missing are the nodes that do not have it with this ID.
	missing []string
}

// LoadImages makes local docker images available in every node of a
// kind-style cluster (not its load balancer), like `kind load docker-image`:
// images a node already has with the same ID are skipped, the rest are saved
// one by one and imported into the nodes that miss them in parallel. A
// mustLoad image that cannot be loaded fails the call; a tryLoad one is a
// warning.
func LoadImages(ctx context.Context, in LoadImagesInput) (*LoadImagesResult, error) {
	if err := in.validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, in.Timeout)
	defer cancel()
	p := wait.Printer{W: in.Progress, Prefix: in.Prefix}
	res := &LoadImagesResult{}
	rt, err := runtime(ctx)
	if err != nil {
		return nil, err
	}

	nodes, _, err := ClusterNodes(ctx, in.ClusterName)
	if err != nil {
		return nil, fmt.Errorf("listing nodes of %s: %w", in.ClusterName, err)
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("cluster %s has no node containers (label %s=%s)", in.ClusterName, ClusterLabel, in.ClusterName)
	}
	res.Nodes = Names(nodes)

	// Resolve every image locally first: a missing mustLoad image fails before any work.
	fail := func(im image, what string, err error) error {
		if im.must || ctx.Err() != nil {
			return fmt.Errorf("%s %s (mustLoad): %w", what, im.name, err)
		}
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s (tryLoad): %v", im.name, err))
		p.Printf("WARNING: not loading %s (tryLoad): %v", im.name, err)
		return nil
	}
	var images []*image
	for _, ci := range in.Images {
		im := &image{name: ci.Name, must: ci.LoadBehavior != clusterctl.TryLoadImage}
		id, err := localImageID(ctx, im.name)
		if err == nil && id == "" && in.Pull {
			p.Printf("pulling %s (not present locally)", im.name)
			if err = rt.PullContainerImage(ctx, im.name); err == nil {
				id, err = localImageID(ctx, im.name)
			}
		}
		if err == nil && id == "" {
			err = errors.New("not present locally (build it, or set Pull on a machine with registry access)")
		}
		if err != nil {
			if ferr := fail(*im, "image", err); ferr != nil {
				return res, ferr
			}
			continue
		}
		im.id = id
		images = append(images, im)
	}

	// Which nodes miss which image (by ID, as kind does); one goroutine per node.
	has := make([]map[string]bool, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		has[i] = map[string]bool{}
		wg.Go(func() {
			node := kindNode{ctx: ctx, name: n.Name}
			// One listing per node answers for every image; an image it
			// cannot place is asked for on its own, as kind does.
			tags, _ := nodeImageIDs(node)
			for _, im := range images {
				if ctx.Err() != nil {
					return
				}
				if id, ok := tags[normalizedTag(im.name)]; ok && id == im.id {
					has[i][im.name] = true
					continue
				}
				if id, err := nodeutils.ImageID(node, im.name); err == nil && id == im.id {
					has[i][im.name] = true
				}
			}
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return res, fmt.Errorf("loading images into %s: interrupted: %w", in.ClusterName, context.Cause(ctx))
	}
	var toLoad []*image
	for _, im := range images {
		for i, n := range nodes {
			if !has[i][im.name] {
				im.missing = append(im.missing, n.Name)
			}
		}
		if len(im.missing) == 0 {
			res.Present = append(res.Present, im.name)
			continue
		}
		toLoad = append(toLoad, im)
	}
	if len(toLoad) == 0 {
		p.Printf("all %d images already present on %s", len(res.Present), strings.Join(res.Nodes, ", "))
		return res, nil
	}

	start := time.Now()
	p.Printf("loading %d images into %d node(s) of %s", len(toLoad), len(nodes), in.ClusterName)
	for _, im := range toLoad {
		if err := loadOne(ctx, im, in.saved[im.name]); err != nil {
			if ctx.Err() != nil {
				return res, fmt.Errorf("loading images into %s: interrupted: %w", in.ClusterName, context.Cause(ctx))
			}
			if ferr := fail(*im, "loading", fmt.Errorf("into %s: %w", in.ClusterName, err)); ferr != nil {
				return res, ferr
			}
			continue
		}
		res.Loaded = append(res.Loaded, im.name)
	}
	p.Printf("loaded %d images into %s in %s (%d already present)", len(res.Loaded), in.ClusterName,
		time.Since(start).Round(100*time.Millisecond), len(res.Present))
	return res, nil
}

// loadOne saves one image (the Runtime saves one image per archive), unless
// saved already holds it, and imports it into the nodes missing it, in
// parallel.
func loadOne(ctx context.Context, im *image, saved string) error {
	tar := saved
	if tar == "" {
		rt, err := runtime(ctx)
		if err != nil {
			return err
		}
		f, err := os.CreateTemp("", "harness-image-*.tar")
		if err != nil {
			return err
		}
		tar = f.Name()
		f.Close()
		defer os.Remove(tar)
		if err := rt.SaveContainerImage(ctx, im.name, tar); err != nil {
			return fmt.Errorf("saving %s: %w", im.name, err)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, len(im.missing))
	for i, n := range im.missing {
		wg.Go(func() {
			if err := importArchive(ctx, n, tar); err != nil {
				errs[i] = fmt.Errorf("node %s: %w", n, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// importArchive imports a saved image archive into one node (`ctr import`
// with the node's snapshotter, through kind's nodeutils).
func importArchive(ctx context.Context, node, tar string) error {
	f, err := os.Open(tar)
	if err != nil {
		return err
	}
	defer f.Close()
	return nodeutils.LoadImageArchive(kindNode{ctx: ctx, name: node}, f)
}
