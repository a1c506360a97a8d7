// Package cluster collects the artifacts of one Kubernetes cluster: resource
// dumps (Cluster API, provider, TKG and Carvel kinds found by discovery, and
// the core kinds that explain failures, Secrets masked), events, every
// container's log, the clusterctl condition tree of each Cluster, and node
// logs taken from the node side (docker exec for kind and CAPD nodes, SSH for
// vSphere machines), so a cluster whose API never came up still leaves its
// kubelet and journal behind. Every piece is an item with its own timeout;
// what fails is listed in errors.txt and the rest goes on.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"

	"github.com/tkg-e2e/harness/framework/artifacts"
	"github.com/tkg-e2e/harness/framework/kube"
)

// DefaultParallel is how many items run at once when Input.Parallel is 0:
// enough to hide API latency, few enough for a 2-core runner.
const DefaultParallel = 8

// Input describes the cluster to collect.
type Input struct {
	// Name of the cluster. For kind and CAPD clusters it is also the value of
	// the io.x-k8s.kind.cluster label on the node containers.
	Name string
	// Role is bootstrap, management or workload; it names the folder.
	Role string
	// KubeconfigPath reaches the cluster's API server.
	KubeconfigPath string
	// DockerNodes says the nodes are kind or CAPD containers on the local
	// Docker engine; node logs are then taken with docker exec. Otherwise
	// they are taken over SSH.
	DockerNodes bool
	// SSH reaches non-container nodes. A zero value is valid: node logs are
	// then recorded as not collected because SSH is not configured.
	SSH SSH
	// MachineKubeconfigs are the clusters that may hold this cluster's
	// Machines (its management cluster; the bootstrap cluster before the
	// move). Their addresses reach VMs whose Node never joined, and every
	// VM when this cluster's API is down. Namespace narrows the listing.
	MachineKubeconfigs []string
	Namespace          string
	// NodeRunner, when set, takes node logs instead of docker exec or the
	// ssh client (a jump host, a Go SSH client, a test double). Nodes are
	// then the cluster's Node objects.
	NodeRunner NodeRunner
	// ItemTimeout bounds each item (config artifacts.itemTimeout). Required.
	ItemTimeout time.Duration
	// Parallel items at once; 0 means DefaultParallel.
	Parallel int
	// LogTailLines of a not-ready pod's logs are kept for SUMMARY.md; 0 means 20.
	LogTailLines int
	// ExtraFiles are copied into the cluster's folder through redaction: file
	// name in the folder -> source path (clusterctl init/move logs).
	ExtraFiles map[string]string
}

func (in *Input) validate() error {
	var errs []error
	if in.Name == "" {
		errs = append(errs, errors.New("Name is empty (the cluster name, also the io.x-k8s.kind.cluster label of kind/CAPD nodes)"))
	}
	if in.KubeconfigPath == "" {
		errs = append(errs, errors.New("KubeconfigPath is empty"))
	}
	if in.ItemTimeout <= 0 {
		errs = append(errs, fmt.Errorf("ItemTimeout is %s; set artifacts.itemTimeout in the profile (e.g. 20s)", in.ItemTimeout))
	}
	if in.Parallel < 0 {
		errs = append(errs, fmt.Errorf("Parallel is %d; use 0 for the default or a positive number", in.Parallel))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("artifacts/cluster: bad input: %w", err)
	}
	if in.Parallel == 0 {
		in.Parallel = DefaultParallel
	}
	if in.LogTailLines <= 0 {
		in.LogTailLines = 20
	}
	return nil
}

// Folder is where a cluster's files go, relative to the artifacts root.
func Folder(role, name string) string {
	if role == "" {
		return path.Join("clusters", artifacts.SafeName(name))
	}
	return path.Join("clusters", artifacts.SafeName(role+"-"+name))
}

type collection struct {
	w      *artifacts.Writer
	in     Input
	folder string
	r      *artifacts.Runner
	inv    *inventory
	// tails maps a pod log file to the end of its content, a string.
	tails sync.Map

	mu    sync.Mutex
	f     artifacts.ClusterFindings
	apiUp bool

	// Node-side files wait here until the Secret values are registered.
	pmu         sync.Mutex
	secretsDone bool
	pending     []*artifacts.File
}

// Collect writes the cluster's artifacts under clusters/<role>-<name>/ and
// returns what the summary needs. It returns an error only for bad input:
// what cannot be collected is recorded in the Writer and in the findings
// (APIError, DockerError), because collection runs after a failure, when
// things are expected to be broken.
func Collect(ctx context.Context, w *artifacts.Writer, in Input) (artifacts.ClusterFindings, error) {
	if w == nil {
		return artifacts.ClusterFindings{}, errors.New("artifacts/cluster: Writer is nil")
	}
	if err := in.validate(); err != nil {
		return artifacts.ClusterFindings{}, err
	}
	start := time.Now()
	folder := Folder(in.Role, in.Name)
	scope := "cluster " + in.Name
	if in.Role != "" {
		scope = "cluster " + in.Role + "/" + in.Name
	}
	r, err := w.NewRunner(scope, in.Parallel, in.ItemTimeout)
	if err != nil {
		return artifacts.ClusterFindings{}, err
	}
	c := &collection{w: w, in: in, folder: folder, r: r, inv: newInventory(),
		f: artifacts.ClusterFindings{Name: in.Name, Role: in.Role, Folder: folder}}

	apiDone := make(chan struct{})
	var wg sync.WaitGroup
	if in.DockerNodes && in.NodeRunner == nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.dockerNodes(ctx, apiDone)
		}()
	}
	c.api(ctx, apiDone)
	wg.Wait()
	c.secretsRegistered() // no-op unless every path above missed it
	c.copyExtraFiles()

	c.mu.Lock()
	defer c.mu.Unlock()
	c.f.Seconds = time.Since(start).Round(time.Millisecond).Seconds()
	if err := w.WriteJSON(path.Join(folder, "findings.json"), c.f); err != nil {
		r.Fail("findings.json", err)
	}
	return c.f, nil
}

// api collects everything that needs the API server. apiDone is closed as
// soon as it is known whether the API answers.
func (c *collection) api(ctx context.Context, apiDone chan<- struct{}) {
	var once sync.Once
	done := func() { once.Do(func() { close(apiDone) }) }
	defer done()

	// A live API server connects in milliseconds, so a quarter of the item
	// timeout is ample and lets a dead one fail early.
	cl, err := kube.Connect(c.in.KubeconfigPath, kube.WithRequestTimeout(c.in.ItemTimeout), kube.WithDialTimeout(c.in.ItemTimeout/4),
		kube.WithRateLimit(100, 200), kube.WithUserAgent("tkg-e2e-harness-artifacts"))
	if err != nil {
		c.apiFailed(err)
		c.nodesWithoutAPI(ctx)
		return
	}
	// Secrets first, beside discovery: their values must be known to the
	// redactor before any log of this cluster is written.
	// Results pass through an atomic: an item abandoned at its timeout may
	// still finish later, while this goroutine has moved on.
	var found atomic.Pointer[[]*metav1.APIResourceList]
	errs := c.r.Run(ctx, artifacts.Item{Name: "API discovery", Run: func(ctx context.Context) error {
		lists, err := discovery.ServerPreferredResources(cl.Clientset.Discovery())
		if err != nil && (!discovery.IsGroupDiscoveryFailedError(err) || len(lists) == 0) {
			return err
		}
		found.Store(&lists)
		if werr := c.writeAPIResources(lists); werr != nil {
			return werr
		}
		// Some groups failed (an aggregated API that is down, such as
		// kapp-controller's packages): the rest is still worth dumping.
		return err
	}}, c.dumpItem(cl, secretsKind))
	c.secretsRegistered()
	lists := found.Load()
	if lists == nil {
		c.apiFailed(errs[0])
		c.nodesWithoutAPI(ctx)
		return
	}
	c.mu.Lock()
	c.apiUp = true
	c.mu.Unlock()
	done()

	items := []artifacts.Item{c.eventsItem(cl)}
	for _, k := range selectKinds(*lists) {
		if k.gvr != secretsKind.gvr {
			items = append(items, c.dumpItem(cl, k))
		}
	}
	c.r.Run(ctx, items...)

	pods := toPods(c.inv.get("pods", ""))
	items = c.podLogItems(cl, pods)
	for _, obj := range c.inv.get("clusters", "cluster.x-k8s.io") {
		items = append(items, c.treeItem(cl, obj.GetNamespace(), obj.GetName()))
	}
	var sshWG sync.WaitGroup
	switch {
	case c.in.NodeRunner != nil:
		for _, n := range c.inv.get("nodes", "") {
			items = append(items, c.nodeLogItems(c.in.NodeRunner, n.GetName(), true)...)
		}
	case !c.in.DockerNodes:
		sshWG.Add(1)
		go func() {
			defer sshWG.Done()
			c.sshNodes(ctx, c.inv.get("nodes", ""), true)
		}()
	}
	c.r.Run(ctx, items...)
	sshWG.Wait()

	c.mu.Lock()
	defer c.mu.Unlock()
	c.f.NotReadyPods = c.podFindings(pods)
	c.f.NotReadyNodes = nodeFindings(c.inv.get("nodes", ""))
	c.f.FailedPackages = packageFindings(c.inv.get("packageinstalls", "packaging.carvel.dev"))
	c.f.MachinesWithoutNodeRef = machineFindings(c.inv.get("machines", "cluster.x-k8s.io"))
	if err := c.writeControllers(pods); err != nil {
		c.r.Fail("controllers.txt", err)
	}
}

func (c *collection) apiFailed(err error) {
	c.secretsRegistered()
	c.mu.Lock()
	c.f.APIError = c.w.Redact(err.Error())
	c.mu.Unlock()
	c.r.Skip("resources, events, pod logs, condition trees", "the API server did not answer ("+oneLine(err.Error())+"); node-side logs are all there is")
}

// nodesWithoutAPI takes the node logs that do not need the cluster's API
// when it did not answer: over SSH, at the Machines' addresses. (The Docker
// path runs on its own, whatever the API does.)
func (c *collection) nodesWithoutAPI(ctx context.Context) {
	if !c.in.DockerNodes && c.in.NodeRunner == nil {
		c.sshNodes(ctx, nil, false)
	}
}

func (c *collection) apiAnswered() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.apiUp
}

func (c *collection) setDockerError(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.f.DockerError = c.w.Redact(err.Error())
}

func (c *collection) addTree(t artifacts.ConditionTree) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.f.ConditionTrees = append(c.f.ConditionTrees, t)
	sort.Slice(c.f.ConditionTrees, func(i, j int) bool { return c.f.ConditionTrees[i].Cluster < c.f.ConditionTrees[j].Cluster })
}

func (c *collection) copyExtraFiles() {
	for _, name := range slices.Sorted(maps.Keys(c.in.ExtraFiles)) {
		src := c.in.ExtraFiles[name]
		if _, err := os.Stat(src); err != nil {
			c.r.Fail("extra file "+name, err)
			continue
		}
		if err := c.w.CopyFile(path.Join(c.folder, artifacts.SafeName(name)), src); err != nil {
			c.r.Fail("extra file "+name, err)
		}
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
