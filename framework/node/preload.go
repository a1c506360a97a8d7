package node

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/tkg-e2e/harness/framework/wait"
)

// Preload gives LoadImages a head start while a cluster is still being made.
// A kind or CAPD node container runs containerd long before kubeadm has
// finished with it (and a CAPD worker appears only after the control plane
// is initialized), so each node gets the images as soon as its container
// takes them, overlapping the creation instead of following it.
//
// It is only ever a head start: Finish runs LoadImages, which finds by ID
// what was preloaded and loads what is missing, so a failed or partial
// preload costs nothing but the time LoadImages would have spent anyway,
// and the result and the mustLoad/tryLoad semantics are LoadImages' own.
// Nothing here fails a run.
type Preload struct {
	in    LoadImagesInput
	poll  time.Duration
	start time.Time
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
	dir   string
	// Only the goroutine writes these until done is closed.
	imported map[string][]string // node -> images imported into it
	had      map[string][]string // node -> images it had already, by ID
	archived map[string]string   // image -> saved archive
	ids      map[string]string   // image -> its ID on this host
	// existing are the nodes there when the preload first looked, nil
	// until it has: a day-two change's old nodes, served after new ones.
	existing map[string]bool
}

// StartPreload starts loading in.Images into the node containers of
// in.ClusterName as they appear, looking for new ones every poll. Images
// missing locally are left to Finish (which pulls them with in.Pull or
// reports them). Call Finish once the cluster's nodes exist, or Stop.
func StartPreload(ctx context.Context, in LoadImagesInput, poll time.Duration) *Preload {
	p := &Preload{in: in, poll: poll, start: time.Now(), stop: make(chan struct{}), done: make(chan struct{}),
		imported: map[string][]string{}, had: map[string][]string{}, archived: map[string]string{}, ids: map[string]string{}}
	if poll <= 0 {
		p.poll = 2 * time.Second
	}
	go p.run(ctx)
	return p
}

// Stop ends the preload after the image it is importing, and removes its
// archives. It is safe to call more than once, and after Finish.
func (p *Preload) Stop() {
	p.halt()
	if p.dir != "" {
		_ = os.RemoveAll(p.dir)
	}
}

// halt ends the preload's goroutine after the image it is importing and
// waits for it; the archives stay.
func (p *Preload) halt() {
	p.once.Do(func() { close(p.stop) })
	<-p.done
}

// Finish stops the preload and runs LoadImages over the cluster's nodes,
// which skips what the preload imported. The result's Preloaded says what
// the head start did.
func (p *Preload) Finish(ctx context.Context) (*LoadImagesResult, error) {
	defer p.Stop()
	// The archives stay until the top-up has imported what it needs of them.
	p.halt()
	p.in.saved = p.archived
	pr := wait.Printer{W: p.in.Progress, Prefix: p.in.Prefix}
	n := 0
	for _, node := range slices.Sorted(maps.Keys(p.imported)) {
		ims := p.imported[node]
		n += len(ims)
		had := ""
		if k := len(p.had[node]); k > 0 {
			had = fmt.Sprintf(", %d it had already", k)
		}
		pr.Printf("preloaded %d of %d images into %s while the nodes of %s were being made (%s since the preload started%s)",
			len(ims), len(p.in.Images), node, p.in.ClusterName, time.Since(p.start).Round(100*time.Millisecond), had)
	}
	res, err := LoadImages(ctx, p.in)
	if res != nil {
		res.Preloaded = n
	}
	return res, err
}

func (p *Preload) stopped() bool {
	select {
	case <-p.stop:
		return true
	default:
		return false
	}
}

func (p *Preload) run(ctx context.Context) {
	defer close(p.done)
	// Only what is here now: pulling, and reporting what is missing, are LoadImages'.
	var images []string
	for _, ci := range p.in.Images {
		if id, err := localImageID(ctx, ci.Name); err == nil && id != "" {
			images = append(images, ci.Name)
			p.ids[ci.Name] = id
		}
	}
	if len(images) == 0 {
		return
	}
	t := time.NewTicker(p.poll)
	defer t.Stop()
	for {
		// One image at a time, looking at the nodes again after each: a
		// worker that appears while the control plane is served goes next.
		if p.importNext(ctx, images) {
			continue
		}
		select {
		case <-p.stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// importNext imports one image into the first node that lacks one and
// takes it (preloadOrder); false when there was nothing it could import.
func (p *Preload) importNext(ctx context.Context, images []string) bool {
	nodes, _, err := ClusterNodes(ctx, p.in.ClusterName)
	if err != nil {
		return false
	}
	cpcs, err := roleContainers(ctx, p.in.ClusterName, RoleControlPlane)
	if err != nil {
		return false
	}
	cps := map[string]bool{}
	for _, c := range cpcs {
		cps[c.Name] = true
	}
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.Name
	}
	if p.existing == nil {
		p.existing = map[string]bool{}
		for _, n := range names {
			p.existing[n] = true
		}
	}
	for _, node := range preloadOrder(names, cps, p.existing) {
		if p.stopped() || ctx.Err() != nil {
			return false
		}
		p.list(ctx, node, images)
		im, ok := nextMissing(images, p.imported[node], p.had[node])
		if !ok {
			continue
		}
		tar, err := p.archive(ctx, im)
		if err != nil {
			return false
		}
		// A node whose containerd is not up yet fails: the next node may take it.
		if importArchive(ctx, node, tar) != nil {
			continue
		}
		p.imported[node] = append(p.imported[node], im)
		return true
	}
	return false
}

// list records once what a node has of the images, by ID as LoadImages
// does: the nodes of a cluster that exists (a day-two rollout or scale
// watches every node of it) have them, and importing them again kept the
// CPU busy and Finish waiting for the import in flight (a scale's
// load-images step took 44.8 s, 2026-11-29). Not listed yet (containerd not
// up) means try again next time. crictl may answer only after an import
// went in (the CRI comes up after containerd): what the preload imported is
// not what it had.
func (p *Preload) list(ctx context.Context, node string, images []string) {
	if _, listed := p.had[node]; listed {
		return
	}
	if tags, err := nodeImageIDs(kindNode{ctx: ctx, name: node}); err == nil {
		p.had[node] = presentOn(tags, slices.DeleteFunc(slices.Clone(images), func(im string) bool { return slices.Contains(p.imported[node], im) }), p.ids)
	}
}

// nextMissing is the first of the images a node has neither been given
// nor had.
func nextMissing(images, imported, had []string) (string, bool) {
	for _, im := range images {
		if !slices.Contains(imported, im) && !slices.Contains(had, im) {
			return im, true
		}
	}
	return "", false
}

// preloadOrder is the order nodes are served in: nodes made since the
// preload started before those that were there (a day-two change waits on
// its new nodes; the old ones run their pods already), and in each, workers
// before control-plane nodes, in the order given. Workers first because
// most of the pods the images are for (cert-manager, kapp-controller,
// packages) do not tolerate the control-plane taint, and a CAPD worker
// appears only after the control plane is initialized: served node by node,
// a worker could get nothing while the control plane took every image.
// LoadImages' top-up still wants every image on every node (Cluster API's
// controllers do tolerate the taint), so this only helps when the preload
// was busy as the worker appeared: the management stage's top-up measured
// 2.3 and 16.1 s after, 10.3-16.4 s before (2026-11-29).
func preloadOrder(nodes []string, controlPlanes, existing map[string]bool) []string {
	rank := func(n string) int {
		r := 0
		if existing[n] {
			r += 2
		}
		if controlPlanes[n] {
			r++
		}
		return r
	}
	out := slices.Clone(nodes)
	slices.SortStableFunc(out, func(a, b string) int { return rank(a) - rank(b) })
	return out
}

// presentOn are the images a node's listing (tag -> ID) has with the
// same ID as this host's.
func presentOn(tags map[string]string, images []string, ids map[string]string) []string {
	out := []string{}
	for _, im := range images {
		if id, ok := tags[normalizedTag(im)]; ok && id == ids[im] {
			out = append(out, im)
		}
	}
	return out
}

// archive saves an image once for every node of the cluster.
func (p *Preload) archive(ctx context.Context, im string) (string, error) {
	if tar, ok := p.archived[im]; ok {
		return tar, nil
	}
	if p.dir == "" {
		dir, err := os.MkdirTemp("", "harness-preload-*")
		if err != nil {
			return "", err
		}
		p.dir = dir
	}
	rt, err := runtime(ctx)
	if err != nil {
		return "", err
	}
	tar := filepath.Join(p.dir, fmt.Sprintf("%d.tar", len(p.archived)))
	if err := rt.SaveContainerImage(ctx, im, tar); err != nil {
		return "", err
	}
	p.archived[im] = tar
	return tar, nil
}
