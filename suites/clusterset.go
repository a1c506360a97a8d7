package suites

import (
	"cmp"
	"fmt"
	"slices"
	"sync"

	"github.com/tkg-e2e/harness/framework/assert"
	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/infrastructure"
	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/vsphere"
)

// Cluster is a cluster of the run, by role: bootstrap, management, workload.
// It is the one handle stages pass around; Connect builds its clients.
type Cluster struct {
	// ID names the cluster in the run (config's ClusterIDs): "workload-2"
	// for a second workload cluster; empty when its role names it.
	ID         string
	Role       string
	Name       string
	Namespace  string
	Kubeconfig string
	// Infrastructure is where its nodes run: infrastructure.KindCluster
	// for the bootstrap cluster, the config's (CAPD, CAPV) for the clusters
	// the run creates, infrastructure.External for make verify's.
	Infrastructure infrastructure.Infrastructure

	once sync.Once
	kube *kube.Cluster
	err  error
}

// Connect returns the cluster's clients (built once, with the request
// timeout every wait needs).
func (c *Cluster) Connect() (*kube.Cluster, error) {
	c.once.Do(func() {
		c.kube, c.err = kube.Connect(c.Kubeconfig)
		if c.err != nil {
			c.err = fmt.Errorf("%s cluster %q: %w", c.Role, c.Name, c.err)
		}
	})
	return c.kube, c.err
}

// Key is the cluster's ID in the run: ID, or else its role.
func (c *Cluster) Key() string {
	if c.ID != "" {
		return c.ID
	}
	return c.Role
}

// DockerNodes reports whether the cluster's nodes are containers on this
// Docker host (kind, CAPD), where images are loaded and node logs read by exec.
func (c *Cluster) DockerNodes() bool {
	return c.Infrastructure != nil && c.Infrastructure.NodesAreContainers()
}

// Roles of the clusters of a run. The checked roles are the assertion
// engine's role registry (assert.Roles); the bootstrap cluster is never checked.
const (
	RoleBootstrap  = "bootstrap"
	RoleManagement = assert.Management
	RoleWorkload   = assert.Workload
	// RoleWindowsWorkload is only checked by make verify, given a kubeconfig.
	RoleWindowsWorkload = assert.WindowsWorkload
)

// ClusterSet is the run's live clusters, by ID, and its vCenter session:
// what the stages made and the later ones act on.
type ClusterSet struct {
	mu       sync.Mutex
	clusters map[string]*Cluster
	vsphere  *vsphere.Session
}

// SetCluster records a cluster the run can use.
func (cs *ClusterSet) SetCluster(c *Cluster) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.clusters == nil {
		cs.clusters = map[string]*Cluster{}
	}
	cs.clusters[c.Key()] = c
}

// DropCluster forgets a cluster (the kind cluster after move).
func (cs *ClusterSet) DropCluster(id string) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	delete(cs.clusters, id)
}

// Cluster returns the cluster of an ID (a role names the first cluster of
// it: "workload"), or nil.
func (cs *ClusterSet) Cluster(id string) *Cluster {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.clusters[id]
}

// Clusters returns the live clusters of the run, in role order, and the
// clusters of one role in the order of their IDs.
func (cs *ClusterSet) Clusters() []*Cluster {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	var out []*Cluster
	for _, role := range append([]string{RoleBootstrap}, assert.Roles...) {
		var of []*Cluster
		for _, c := range cs.clusters {
			if c.Role == role {
				of = append(of, c)
			}
		}
		slices.SortFunc(of, func(a, b *Cluster) int { return cmp.Compare(config.IDOrder(a.Key()), config.IDOrder(b.Key())) })
		out = append(out, of...)
	}
	return out
}

// Workloads returns the run's live workload clusters, the first first.
func (cs *ClusterSet) Workloads() []*Cluster {
	var out []*Cluster
	for _, c := range cs.Clusters() {
		if c.Role == RoleWorkload {
			out = append(out, c)
		}
	}
	return out
}

// SetVSphere records the run's vCenter session for later stages and the collectors.
func (cs *ClusterSet) SetVSphere(s *vsphere.Session) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.vsphere = s
}

// VSphere returns the run's vCenter session, or nil when none was opened.
func (cs *ClusterSet) VSphere() *vsphere.Session {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.vsphere
}
