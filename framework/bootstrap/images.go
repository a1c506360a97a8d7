package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/cluster-api/test/framework/clusterctl"
	kind "sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"

	"github.com/tkg-e2e/harness/framework/wait"
)

// LoadImagesInput is the input of LoadImages.
type LoadImagesInput struct {
	// ClusterName is a kind cluster or a CAPD Cluster: both label their node
	// containers io.x-k8s.kind.cluster=<name>, so kind's node handling serves both.
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
	if in.Timeout <= 0 {
		errs = append(errs, "Timeout must be > 0 (set it from the config intervals)")
	}
	if len(errs) > 0 {
		return fmt.Errorf("bootstrap.LoadImages: invalid input: %s", strings.Join(errs, "; "))
	}
	return nil
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
}

// LoadImages makes local docker images available in every node of a kind-style
// cluster (not its load balancer), like `kind load docker-image`: images a node
// already has with the same ID are skipped, the rest go in one `docker save`
// archive imported into the nodes in parallel.
func LoadImages(ctx context.Context, in LoadImagesInput) (*LoadImagesResult, error) {
	if err := in.validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, in.Timeout)
	defer cancel()
	p := wait.Printer{W: in.Progress, Prefix: in.Prefix}
	res := &LoadImagesResult{}

	nodeList, err := kind.NewProvider(kind.ProviderWithDocker()).ListInternalNodes(in.ClusterName)
	if err != nil {
		return nil, fmt.Errorf("listing nodes of %s: %w", in.ClusterName, err)
	}
	if len(nodeList) == 0 {
		return nil, fmt.Errorf("cluster %s has no node containers (label %s=%s)", in.ClusterName, ClusterLabel, in.ClusterName)
	}
	for _, n := range nodeList {
		res.Nodes = append(res.Nodes, n.String())
	}

	// Resolve every image locally first: a missing mustLoad image fails before any work.
	type image struct {
		name, id string
		must     bool
	}
	var images []image
	for _, im := range in.Images {
		must := im.LoadBehavior != clusterctl.TryLoadImage
		id, err := imageID(ctx, im.Name)
		if err == nil && id == "" && in.Pull {
			p.Printf("pulling %s (not present locally)", im.Name)
			if _, perr := docker(ctx, "pull", im.Name); perr != nil {
				err = perr
			} else {
				id, err = imageID(ctx, im.Name)
			}
		}
		if err == nil && id == "" {
			err = errors.New("not present locally (build it, or set Pull on a machine with registry access)")
		}
		if err != nil {
			if must || ctx.Err() != nil {
				return res, fmt.Errorf("image %s (mustLoad): %w", im.Name, err)
			}
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s (tryLoad): %v", im.Name, err))
			p.Printf("WARNING: not loading %s (tryLoad): %v", im.Name, err)
			continue
		}
		images = append(images, image{name: im.Name, id: id, must: must})
	}

	// Which nodes miss which image (by ID, as kind does); one goroutine per node.
	has := make([]map[string]bool, len(nodeList))
	var wg sync.WaitGroup
	for i, n := range nodeList {
		has[i] = map[string]bool{}
		wg.Go(func() {
			for _, im := range images {
				if ctx.Err() != nil {
					return
				}
				if id, err := nodeutils.ImageID(n, im.name); err == nil && id == im.id {
					has[i][im.name] = true
				}
			}
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return res, fmt.Errorf("loading images into %s: interrupted: %w", in.ClusterName, context.Cause(ctx))
	}
	need := map[string][]nodes.Node{}
	var toSave []image
	for _, im := range images {
		var missing []nodes.Node
		for i, n := range nodeList {
			if !has[i][im.name] {
				missing = append(missing, n)
			}
		}
		if len(missing) == 0 {
			res.Present = append(res.Present, im.name)
			continue
		}
		need[im.name] = missing
		toSave = append(toSave, im)
	}
	if len(toSave) == 0 {
		p.Printf("all %d images already present on %s", len(res.Present), strings.Join(res.Nodes, ", "))
		return res, nil
	}

	dir, err := os.MkdirTemp("", "harness-images-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	load := func(ims []image) error {
		tar := filepath.Join(dir, "images.tar")
		args := []string{"save", "-o", tar}
		targets := map[string]nodes.Node{}
		for _, im := range ims {
			args = append(args, im.name)
			for _, n := range need[im.name] {
				targets[n.String()] = n
			}
		}
		if _, err := docker(ctx, args...); err != nil {
			return err
		}
		defer os.Remove(tar)
		var lw sync.WaitGroup
		errs := make(chan error, len(targets))
		for _, n := range targets {
			lw.Go(func() {
				if err := importArchive(ctx, n, tar); err != nil {
					errs <- fmt.Errorf("node %s: %w", n.String(), err)
				}
			})
		}
		lw.Wait()
		close(errs)
		var all []error
		for e := range errs {
			all = append(all, e)
		}
		return errors.Join(all...)
	}

	start := time.Now()
	p.Printf("loading %d images into %d node(s) of %s", len(toSave), len(nodeList), in.ClusterName)
	if err := load(toSave); err != nil {
		if ctx.Err() != nil {
			return res, fmt.Errorf("loading images into %s: interrupted: %w", in.ClusterName, context.Cause(ctx))
		}
		// One archive failed: load image by image to say which one, and to let
		// tryLoad images fail without failing the rest.
		p.Printf("loading the images together failed (%v); loading one by one", err)
		for _, im := range toSave {
			if err := load([]image{im}); err != nil {
				if im.must || ctx.Err() != nil {
					return res, fmt.Errorf("loading %s (mustLoad) into %s: %w", im.name, in.ClusterName, err)
				}
				res.Warnings = append(res.Warnings, fmt.Sprintf("%s (tryLoad): %v", im.name, err))
				p.Printf("WARNING: could not load %s (tryLoad): %v", im.name, err)
				continue
			}
			res.Loaded = append(res.Loaded, im.name)
		}
	} else {
		for _, im := range toSave {
			res.Loaded = append(res.Loaded, im.name)
		}
	}
	p.Printf("loaded %d images into %s in %s (%d already present)", len(res.Loaded), in.ClusterName,
		time.Since(start).Round(100*time.Millisecond), len(res.Present))
	return res, nil
}

// importArchive streams an image archive into a node's containerd. The reader
// fails once ctx ends, which ends `ctr import` promptly.
func importArchive(ctx context.Context, n nodes.Node, tar string) error {
	f, err := os.Open(tar)
	if err != nil {
		return err
	}
	defer f.Close()
	return nodeutils.LoadImageArchive(n, ctxReader{ctx: ctx, r: f})
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
