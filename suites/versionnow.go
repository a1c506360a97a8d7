package suites

import (
	"github.com/tkg-e2e/harness/framework/clusters"
	"github.com/tkg-e2e/harness/framework/config"
)

// AttrKubernetesVersion is the state attribute of a Cluster API cluster
// whose version a day-two stage changed: from then on it is the version the
// cluster should have, whatever the config says it was created at.
const AttrKubernetesVersion = "kubernetesVersion"

// KubernetesVersionNow is the version a cluster of the run should have
// now: the one an upgrade took it to (state.json, so a resumed run knows
// it too), else the one it was created at.
func (e *Env) KubernetesVersionNow(c *Cluster) string {
	if r, ok := e.State.Resource(clusters.ResourceKind, c.Name); ok && r.Attributes[AttrKubernetesVersion] != "" {
		return r.Attributes[AttrKubernetesVersion]
	}
	spec, _ := e.Config.ClusterOf(c.Key())
	return spec.KubernetesVersion
}

// clusterByName is the run's cluster of that name (nil when none).
func (cs *ClusterSet) clusterByName(name string) *Cluster {
	for _, c := range cs.Clusters() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// expectationFor is what health expects of a cluster of the run: its
// configured node counts, at the version it should have now.
func (e *Env) expectationFor(name string) (config.WorkloadCluster, string, bool) {
	c := e.clusterByName(name)
	if c == nil {
		return config.WorkloadCluster{}, "", false
	}
	spec, ok := e.Config.ClusterOf(c.Key())
	return spec, e.KubernetesVersionNow(c), ok
}
