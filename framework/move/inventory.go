package move

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterctlclient "sigs.k8s.io/cluster-api/cmd/clusterctl/client"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/kube"
)

// Object identifies one object clusterctl moves.
type Object struct {
	Kind      string
	Namespace string
	Name      string
}

func (o Object) String() string { return o.Kind + " " + o.Namespace + "/" + o.Name }

// Inventory is clusterctl's own view of what a move covers: its object graph
// as a dry-run move logs it (nothing is changed on either cluster; see
// recorder for why the log).
type Inventory struct {
	// Discovered counts, per kind, every object clusterctl's discovery listed
	// (the "<Kind> Count=N" lines of a verbose move), and their total
	// ("Total objects Count=N"). It includes objects that are not moved, such
	// as Secrets of the infrastructure provider's namespace.
	Discovered      map[string]int
	DiscoveredTotal int
	// Objects clusterctl creates on the target (its move set), sorted.
	Objects []Object
	// Duration of the discovery.
	Duration time.Duration
}

// ToMove counts the move set per kind.
func (inv *Inventory) ToMove() map[string]int { return countByKind(inv.Objects) }

// String renders the discovery like clusterctl's log, then the move set.
func (inv *Inventory) String() string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(inv.Discovered)) {
		fmt.Fprintf(&b, "%s Count=%d\n", k, inv.Discovered[k])
	}
	fmt.Fprintf(&b, "Total objects Count=%d\n", inv.DiscoveredTotal)
	fmt.Fprintf(&b, "to move: %s (total %d)", FormatCounts(inv.ToMove()), len(inv.Objects))
	return b.String()
}

// FormatCounts renders per-kind counts as "Cluster=1 Machine=2 ...".
func FormatCounts(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}

// DiffCounts lists the kinds whose counts differ ("Secret: source 12, target 11").
func DiffCounts(source, target map[string]int) []string {
	keys := map[string]bool{}
	for k := range source {
		keys[k] = true
	}
	for k := range target {
		keys[k] = true
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if source[k] != target[k] {
			out = append(out, fmt.Sprintf("%s: source %d, target %d", k, source[k], target[k]))
		}
	}
	return out
}

func countByKind(objs []Object) map[string]int {
	m := map[string]int{}
	for _, o := range objs {
		m[o.Kind]++
	}
	return m
}

// recorder reads clusterctl's move log: the discovery counts and the objects it
// creates and deletes. The entries it relies on are logged by clusterctl's
// object graph and mover (cmd/clusterctl/client/cluster: objectgraph.go
// Discovery, mover.go createTargetObject/deleteSourceObject).
//
// The log is the only exported view of that graph in Cluster API v1.14: the
// graph (objectGraph, its nodes, getMoveNodes, getMoveSequence) is unexported,
// and cluster.ObjectMover exports only Move, ToDirectory and FromDirectory.
// ToDirectory (`clusterctl move --to-directory`) would give the move set as
// files, but it is no dry run: it pauses the source Clusters and
// ClusterClasses while it writes (left paused if interrupted, which makes the
// move that follows refuse), writes every moved Secret to disk, and still says
// nothing about the per-kind discovery counts or what the real move created
// and deleted. Those exist only as the log entries read here, so the log
// stays the one source for all of them.
type recorder struct {
	inDiscovery bool
	discovered  map[string]int
	total       int
	sawTotal    bool
	created     []Object
	deleted     []Object
}

func newRecorder() *recorder { return &recorder{discovered: map[string]int{}} }

func (r *recorder) observe(e kube.LogEntry) {
	switch {
	case e.Msg == "Discovering Cluster API objects":
		r.inDiscovery = true
	case e.Msg == "Total objects" && len(e.KV) >= 2 && e.KV[0] == "count":
		r.total, _ = e.KV[1].(int)
		r.sawTotal = true
		r.inDiscovery = false
	case r.inDiscovery && len(e.KV) == 2 && e.KV[0] == "count":
		if n, ok := e.KV[1].(int); ok {
			r.discovered[e.Msg] += n
		}
	case (e.Msg == "Creating" || e.Msg == "Deleting") && len(e.KV) >= 4:
		o := Object{Kind: fmt.Sprint(e.KV[0]), Name: fmt.Sprint(e.KV[1]), Namespace: fmt.Sprint(e.KV[3])}
		if e.Msg == "Creating" {
			r.created = append(r.created, o)
		} else {
			r.deleted = append(r.deleted, o)
		}
	}
}

func sortObjects(objs []Object) []Object {
	out := append([]Object(nil), objs...)
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// DiscoverInput is the input of Discover.
type DiscoverInput struct {
	// FromKubeconfig is the cluster the objects are moved from.
	FromKubeconfig string
	// Namespace of the Cluster(s) to move.
	Namespace            string
	ClusterctlConfigPath string
	Timeout              time.Duration
}

// Discover runs clusterctl's move discovery on the source cluster as a dry
// run (`clusterctl move --dry-run`): it changes nothing, and returns what
// clusterctl discovered and what it would move.
func Discover(ctx context.Context, in DiscoverInput) (*Inventory, error) {
	if in.FromKubeconfig == "" || in.Namespace == "" || in.Timeout <= 0 {
		return nil, fmt.Errorf("move.Discover: invalid input: FromKubeconfig, Namespace and Timeout (> 0) are required")
	}
	start := time.Now()
	rec := newRecorder()
	ctx, cancel := context.WithTimeout(ctx, in.Timeout)
	defer cancel()
	err := kube.ClusterctlCall(ctx, kube.ClusterctlLog{Observe: rec.observe}, func(ctx context.Context) error {
		c, err := clusterctlclient.New(ctx, in.ClusterctlConfigPath)
		if err != nil {
			return err
		}
		return c.Move(ctx, clusterctlclient.MoveOptions{FromKubeconfig: clusterctlclient.Kubeconfig{Path: in.FromKubeconfig},
			Namespace: in.Namespace, DryRun: true})
	})
	if err != nil {
		return nil, fmt.Errorf("move discovery (dry run) on %s: %w", in.FromKubeconfig, err)
	}
	if !rec.sawTotal {
		return nil, fmt.Errorf("move discovery (dry run) on %s: clusterctl did not log its discovery (\"Total objects\"); has its log format changed?", in.FromKubeconfig)
	}
	return &Inventory{Discovered: rec.discovered, DiscoveredTotal: rec.total, Objects: sortObjects(rec.created), Duration: time.Since(start)}, nil
}

// kindIndex maps a kind to the group/versions clusterctl discovers for it: the
// storage version of every CRD labelled by clusterctl, plus Secret and ConfigMap.
func kindIndex(ctx context.Context, c client.Client) (map[string][]schema.GroupVersionKind, error) {
	crds := apiextensionsv1.CustomResourceDefinitionList{}
	if err := c.List(ctx, &crds, client.HasLabels{"clusterctl.cluster.x-k8s.io"}); err != nil {
		return nil, fmt.Errorf("listing clusterctl CRDs: %w", err)
	}
	idx := map[string][]schema.GroupVersionKind{
		"Secret":    {{Version: "v1", Kind: "Secret"}},
		"ConfigMap": {{Version: "v1", Kind: "ConfigMap"}},
	}
	for _, crd := range crds.Items {
		for _, v := range crd.Spec.Versions {
			if v.Storage {
				k := crd.Spec.Names.Kind
				idx[k] = append(idx[k], schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: k})
			}
		}
	}
	return idx, nil
}

// lookup finds an object by kind, namespace and name; found is false if it does not exist.
func lookup(ctx context.Context, c client.Client, idx map[string][]schema.GroupVersionKind, o Object) (found bool, err error) {
	gvks := idx[o.Kind]
	if len(gvks) == 0 {
		return false, fmt.Errorf("kind %s is not served by a clusterctl-managed CRD", o.Kind)
	}
	for _, gvk := range gvks {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		err := c.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: o.Name}, u)
		if err == nil {
			return true, nil
		}
		if client.IgnoreNotFound(err) != nil {
			return false, err
		}
	}
	return false, nil
}
