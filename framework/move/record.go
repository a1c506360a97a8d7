package move

import (
	"github.com/tkg-e2e/harness/framework/clusters"
	"github.com/tkg-e2e/harness/framework/run"
)

// record changes the moved cluster's resource in the run's state, when the
// run keeps one and it names the cluster in this namespace.
func record(state *run.State, namespace, name string, change func(*run.Resource)) error {
	if state == nil {
		return nil
	}
	r, ok := state.Resource(clusters.ResourceKind, name)
	if !ok || r.Namespace != namespace {
		return nil
	}
	return state.UpdateResource(r.Key(), change)
}

// moving records a move into the cluster of kubeconfig to as started: a run
// interrupted during it leaves a state that says the Cluster may be paused
// with objects on both sides, and a check waiting for the move to be under
// way reads this instead of the wording of a log line.
func moving(to string) func(*run.Resource) {
	return func(r *run.Resource) { r.SetAttribute(clusters.AttrMoving, to) }
}

// moved records the move into to as done: the cluster is managed by to (and
// self-hosted when to is its own kubeconfig), and deleted through it.
func moved(to, namespace, name string) func(*run.Resource) {
	return func(r *run.Resource) {
		delete(r.Attributes, clusters.AttrMoving)
		r.SetAttribute(clusters.AttrManagedBy, to)
		if r.Kubeconfig == to {
			r.SetAttribute(clusters.AttrSelfHosted, "true")
		}
		r.DeleteHint = clusters.DeleteHint(to, namespace, name)
	}
}
