package node

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/moby/moby/client"

	"github.com/tkg-e2e/harness/framework/run"
)

// A cluster name is not an identity: anyone can label a container
// io.x-k8s.kind.cluster=<name>, and two runs (or a kept run and a new one)
// can use the same name. What identifies a run's container for certain is
// its Docker ID, recorded in the run state when the container is first seen
// (RecordContainers), or a RunLabel the harness put on it. Cleanup and the
// leak checks act only on containers that carry the run's identity and
// report the others without touching them.

// RunLabel is the docker label a container the harness creates itself
// carries, with the run ID as its value. kind and CAPD create the nodes and
// load balancers and cannot be given docker labels; theirs are recorded by ID.
const RunLabel = "tkg-e2e.run"

// AttrContainers is the run.Resource attribute holding the recorded
// containers of a cluster: "name=id,name=id", sorted by name.
const AttrContainers = "containers"

// ContainerInfo is a container with what identifies it: the Runtime's
// Container has neither ID nor labels nor creation time.
type ContainerInfo struct {
	ID      string
	Name    string
	Image   string
	Status  string
	Created time.Time
	Labels  map[string]string
}

func (c ContainerInfo) String() string {
	return fmt.Sprintf("%s (%s, created %s)", c.Name, shortID(c.ID), c.Created.UTC().Format(time.RFC3339))
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// Inventory lists containers with their IDs, labels and creation times.
// The Docker API is used unless one is stored in the context (InventoryInto),
// which is how tests substitute a fake.
type Inventory interface {
	// ListByLabel lists the containers, running or not, with label key=value.
	ListByLabel(ctx context.Context, key, value string) ([]ContainerInfo, error)
	// Networks lists docker network names.
	Networks(ctx context.Context) ([]string, error)
}

type inventoryKey struct{}

// InventoryInto returns a context whose node calls list containers through inv.
func InventoryInto(ctx context.Context, inv Inventory) context.Context {
	return context.WithValue(ctx, inventoryKey{}, inv)
}

func inventory(ctx context.Context) Inventory {
	if inv, ok := ctx.Value(inventoryKey{}).(Inventory); ok && inv != nil {
		return inv
	}
	return dockerInventory{}
}

type dockerInventory struct{}

func (dockerInventory) Networks(ctx context.Context) ([]string, error) { return dockerNetworks(ctx) }

func (dockerInventory) ListByLabel(ctx context.Context, key, value string) ([]ContainerInfo, error) {
	cli, err := dockerAPI()
	if err != nil {
		return nil, fmt.Errorf("docker: %w", err)
	}
	res, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: client.Filters{}.Add("label", key+"="+value)})
	if err != nil {
		return nil, fmt.Errorf("listing containers labelled %s=%s: %w", key, value, err)
	}
	out := make([]ContainerInfo, 0, len(res.Items))
	for _, c := range res.Items {
		name := ""
		if len(c.Names) > 0 {
			name = strings.TrimPrefix(c.Names[0], "/")
		}
		out = append(out, ContainerInfo{ID: c.ID, Name: name, Image: c.Image, Status: c.Status,
			Created: time.Unix(c.Created, 0).UTC(), Labels: c.Labels})
	}
	return out, nil
}

// ListCluster lists the containers labelled with a cluster's name, sorted by name.
func ListCluster(ctx context.Context, clusterName string) ([]ContainerInfo, error) {
	cs, err := inventory(ctx).ListByLabel(ctx, ClusterLabel, clusterName)
	if err != nil {
		return nil, err
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].Name < cs[j].Name })
	return cs, nil
}

// Identity is what makes a container a run's: its run ID, the window in
// which the run created things, and the containers it recorded.
type Identity struct {
	RunID string
	// Started is when the run started; Until is the last time it was seen
	// working (its state file's last write before cleanup). Containers
	// kind or CAPD made for the run and that it could not record were
	// created in between.
	Started, Until time.Time
}

// IdentityOf is the identity of the run in s, as cleanup found it
// (cleanup.RunOf gives the state and the time it last worked), or of the
// run as it is now when until is zero. Without a state it is empty: only a
// RunLabel of "" matches nothing, so nothing unrecorded is claimed.
func IdentityOf(s *run.State, until time.Time) Identity {
	if s == nil {
		return Identity{}
	}
	if until.IsZero() {
		until = time.Now()
	}
	return Identity{RunID: s.RunID, Started: s.Started, Until: until}
}

// Recorded parses a resource's AttrContainers: ID -> name.
func Recorded(r run.Resource) map[string]string {
	out := map[string]string{}
	for _, pair := range strings.Split(r.Attributes[AttrContainers], ",") {
		name, id, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if ok && id != "" {
			out[id] = name
		}
	}
	return out
}

// Verdict says whether a container is a cluster's of this run, and why.
type Verdict struct {
	Container ContainerInfo
	Mine      bool
	Why       string
}

// Claim sorts the containers labelled with a run cluster's name into the
// run's and the others:
//   - a RunLabel decides: the run's ID is the run's, any other is not;
//   - a recorded ID is the run's;
//   - an unrecorded container is the run's only when kind or CAPD made it
//     (it has their role label), it is named after the cluster
//     ("<cluster>-..."), and it was created while the run worked (between
//     its start and its last state write): a node or load balancer CAPD made
//     after the run recorded the cluster's containers, or before an
//     interrupted run could;
//   - everything else is someone else's: left alone, and reported.
func Claim(cs []ContainerInfo, r run.Resource, id Identity) []Verdict {
	rec := Recorded(r)
	out := make([]Verdict, 0, len(cs))
	for _, c := range cs {
		out = append(out, claim(c, r.Name, rec, id))
	}
	return out
}

func claim(c ContainerInfo, cluster string, rec map[string]string, id Identity) Verdict {
	v := Verdict{Container: c}
	if l, ok := c.Labels[RunLabel]; ok {
		v.Mine = l == id.RunID
		if v.Mine {
			v.Why = "labelled " + RunLabel + "=" + l
		} else {
			v.Why = fmt.Sprintf("labelled %s=%s, another run", RunLabel, l)
		}
		return v
	}
	if _, ok := rec[c.ID]; ok {
		return Verdict{Container: c, Mine: true, Why: "recorded by the run"}
	}
	// Docker's creation time has a resolution of one second.
	started := id.Started.Truncate(time.Second)
	switch {
	case c.Labels[RoleLabel] == "":
		v.Why = "not recorded, and not a kind or CAPD node (no " + RoleLabel + " label)"
	case !strings.HasPrefix(c.Name, cluster+"-"):
		v.Why = "not recorded, and not named after the cluster"
	case id.Started.IsZero() || c.Created.Before(started):
		v.Why = fmt.Sprintf("not recorded, and created %s, before the run started (%s)",
			c.Created.UTC().Format(time.RFC3339), id.Started.UTC().Format(time.RFC3339))
	case !id.Until.IsZero() && c.Created.After(id.Until):
		v.Why = fmt.Sprintf("not recorded, and created %s, after the run last wrote its state (%s)",
			c.Created.UTC().Format(time.RFC3339), id.Until.UTC().Format(time.RFC3339))
	default:
		v.Mine = true
		v.Why = "not recorded, but a kind/CAPD container of the cluster created while the run worked"
	}
	return v
}

// Split returns the run's containers and the notes on the others.
func Split(vs []Verdict) (mine []ContainerInfo, others []string) {
	for _, v := range vs {
		if v.Mine {
			mine = append(mine, v.Container)
			continue
		}
		others = append(others, fmt.Sprintf("container %s is labelled %s=%s but is not this run's (%s): left alone",
			v.Container, ClusterLabel, v.Container.Labels[ClusterLabel], v.Why))
	}
	return mine, others
}

// RemoveOwned removes, by ID, the containers labelled with the resource's
// cluster name that are the run's (Claim), and returns what it removed and
// a note for each container of that label it left alone.
func RemoveOwned(ctx context.Context, r run.Resource, id Identity) (removed, leftAlone []string, err error) {
	cs, err := ListCluster(ctx, r.Name)
	if err != nil {
		return nil, nil, err
	}
	mine, others := Split(Claim(cs, r, id))
	rt, err := runtime(ctx)
	if err != nil {
		return nil, others, err
	}
	// The ID, never the name: a name can have been taken again since.
	rs := make([]removal, len(mine))
	for i, c := range mine {
		rs[i] = removal{ref: c.ID, name: c.Name, what: c.String()}
	}
	removed, err = removeAll(ctx, rt, rs)
	return removed, others, err
}

// RecordContainers adds to the resource's AttrContainers the containers of
// its cluster that are the run's by Claim's rules and, when names is not
// empty, are named in it (the Machines' or nodes' names and the load
// balancer's: what kind or CAPD made for this cluster). Call it as soon as
// the containers exist (after kind create; when CAPD's Machines are
// Running); calling it again adds what is new. It returns what it recorded.
func RecordContainers(ctx context.Context, s *run.State, key string, names map[string]bool) ([]string, error) {
	r, ok := resourceByKey(s, key)
	if !ok {
		return nil, fmt.Errorf("recording containers: no resource %s in the run state", key)
	}
	cs, err := ListCluster(ctx, r.Name)
	if err != nil {
		return nil, err
	}
	id := IdentityOf(s, time.Now().Add(time.Second))
	rec := Recorded(r)
	added := 0
	for _, v := range Claim(cs, r, id) {
		if !v.Mine || (len(names) > 0 && !names[v.Container.Name]) {
			continue
		}
		if _, ok := rec[v.Container.ID]; !ok {
			rec[v.Container.ID] = v.Container.Name
			added++
		}
	}
	var pairs, out []string
	for cid, name := range rec {
		pairs = append(pairs, name+"="+cid)
		out = append(out, name)
	}
	sort.Strings(pairs)
	sort.Strings(out)
	if added == 0 {
		return out, nil
	}
	attrs := make(map[string]string, len(r.Attributes)+1)
	for k, v := range r.Attributes {
		attrs[k] = v
	}
	attrs[AttrContainers] = strings.Join(pairs, ",")
	r.Attributes = attrs
	return out, s.PutResource(r)
}

// SetAttribute sets one attribute of a recorded resource (e.g. the Cluster
// object's UID).
func SetAttribute(s *run.State, key, attr, value string) error {
	r, ok := resourceByKey(s, key)
	if !ok {
		return fmt.Errorf("no resource %s in the run state", key)
	}
	attrs := make(map[string]string, len(r.Attributes)+1)
	for k, v := range r.Attributes {
		attrs[k] = v
	}
	attrs[attr] = value
	r.Attributes = attrs
	return s.PutResource(r)
}

func resourceByKey(s *run.State, key string) (run.Resource, bool) {
	if s == nil {
		return run.Resource{}, false
	}
	for _, r := range s.Live() {
		if r.Key() == key {
			return r, true
		}
	}
	return run.Resource{}, false
}
