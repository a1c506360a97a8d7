package clusters

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/cleanup"
	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/node"
	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/framework/wait"
)

// AttrClusterUID is the capi-cluster attribute holding the Cluster object's
// UID, recorded once the cluster's Machines are Running; AttrClusterUIDIn is
// the kubeconfig of the cluster that held it then. `clusterctl move`
// recreates the object with another UID, so the UID identifies the Cluster
// only while it is still held there.
const (
	AttrClusterUID   = "clusterUID"
	AttrClusterUIDIn = "clusterUIDIn"
)

// recordedUID is the UID to check the Cluster object against, or "".
func recordedUID(r run.Resource) string {
	if r.Attributes[AttrClusterUIDIn] != r.Attributes[AttrManagedBy] {
		return ""
	}
	return r.Attributes[AttrClusterUID]
}

// Deleter returns cleanup's deleter of capi-cluster resources: through the
// cluster that holds the Cluster object (Delete, bounded by timeout), when
// that object is the one the run created (its UID as recorded). When that
// cluster does not answer, or the cluster is self-hosted (a management
// cluster after `clusterctl move`, which cannot delete itself), the run's
// node and load balancer containers are removed by ID instead (node.Claim
// says which are the run's); other containers carrying the cluster's label
// are left alone and reported. Cleanup marks the resource deleted.
func Deleter(timeout, interval time.Duration, progress io.Writer, prefix string) func(ctx context.Context, r run.Resource) (string, error) {
	return DeleterWith(timeout, interval, progress, prefix, nil, nil)
}

// SelfHostedFunc deletes a self-hosted management cluster, which cannot
// delete itself: the way that works on every provider moves it back into a
// throw-away bootstrap cluster, then deletes it there through Cluster API
// (what `tanzu management-cluster delete` does); on CAPD, RemoveContainers
// removes its containers instead. It returns how.
type SelfHostedFunc func(ctx context.Context, r run.Resource) (string, error)

// ManagedFunc deletes a cluster another (management) cluster manages in
// place of the Cluster API delete through that cluster: RemoveManaged
// removes its containers (CAPD). It returns how.
type ManagedFunc func(ctx context.Context, r run.Resource) (string, error)

// DeleterWith is Deleter with a way out for self-hosted clusters: with
// selfHosted set, a self-hosted cluster (and one an interrupted move left
// half-moved, whose Cluster object is only on itself) goes through it
// instead of having its containers removed by ID (which only exists for
// CAPD, and on vSphere would leave every VM behind). With selfHosted nil a
// half-moved cluster is not looked for: it is deleted through the cluster
// that held it, which waits out the timeout before removing the containers.
// With managed set, a cluster another cluster manages goes through it
// instead of a delete through its management cluster.
func DeleterWith(timeout, interval time.Duration, progress io.Writer, prefix string, selfHosted SelfHostedFunc, managed ManagedFunc) func(ctx context.Context, r run.Resource) (string, error) {
	return func(ctx context.Context, r run.Resource) (string, error) {
		p := wait.Printer{W: progress, Prefix: prefix}
		s, until := cleanup.RunOf(ctx)
		id := node.IdentityOf(s, until)
		if r.Attributes[AttrSelfHosted] == "true" && selfHosted != nil {
			return selfHosted(ctx, r)
		}
		if selfHosted != nil && halfMoved(ctx, r) {
			// clusterctl move was interrupted after it deleted the source's
			// Cluster: the only copy is on the cluster itself, paused.
			p.Printf("cleanup: %s: its Cluster object is no longer on %s but on the cluster itself (an interrupted move): deleting it as self-hosted",
				r.Key(), r.Attributes[AttrManagedBy])
			return selfHosted(ctx, r)
		}
		selfHosted := r.Attributes[AttrSelfHosted] == "true"
		if managedBy := r.Attributes[AttrManagedBy]; !selfHosted && managedBy != "" && managed != nil {
			return managed(ctx, r)
		}
		if managedBy := r.Attributes[AttrManagedBy]; !selfHosted && managedBy != "" {
			mgmt, err := kube.Connect(managedBy)
			if err == nil {
				err = mgmt.Ready(ctx)
			}
			if err == nil {
				err = Delete(ctx, DeleteInput{Management: mgmt, Namespace: r.Namespace, Name: r.Name, UID: recordedUID(r),
					Owner: &ownerOf{r: r, id: id}, Timeout: timeout, Interval: interval, Progress: progress, Prefix: prefix})
				if err == nil {
					return "deleted through its management cluster", nil
				}
				if ctx.Err() != nil {
					return "", err
				}
			}
			p.Printf("cleanup: %s: cannot delete through %s (%v); removing the run's containers", r.Key(), managedBy, err)
		}
		note := ""
		if selfHosted {
			note = "self-hosted"
		}
		return removeRunsContainers(ctx, r, id, note)
	}
}

// DeletesIndependently says which resources DeleterWith, given the same selfHosted
// and managed, deletes by removing the run's containers by ID, touching
// nothing else of the run (cleanup.Input.Independent): selfHostedByID says
// selfHosted is RemoveContainers. A cluster that may be half-moved counts
// as self-hosted, and one deleted through its management cluster does not.
func DeletesIndependently(selfHosted SelfHostedFunc, selfHostedByID bool, managed ManagedFunc) func(r run.Resource) bool {
	selfHostedIndependent := selfHosted == nil || selfHostedByID
	return func(r run.Resource) bool {
		if r.Attributes[AttrSelfHosted] == "true" || r.Attributes[AttrManagedBy] == "" {
			return selfHostedIndependent
		}
		return managed != nil && selfHostedIndependent
	}
}

// DeletableTogether says which two clusters DeleterWith may delete at the
// same time through their management cluster (cleanup.Input.Together):
// clusters of one management cluster that is not one of them, each
// deleting only its own Cluster object (two workload clusters).
func DeletableTogether(a, b run.Resource) bool {
	managedBy := a.Attributes[AttrManagedBy]
	return a.Kind == ResourceKind && b.Kind == ResourceKind && managedBy != "" && b.Attributes[AttrManagedBy] == managedBy &&
		a.Attributes[AttrSelfHosted] != "true" && b.Attributes[AttrSelfHosted] != "true"
}

// RemoveContainers is the SelfHostedFunc that removes a self-hosted
// cluster's node and load balancer containers the run recorded, by ID
// (node.RemoveOwned), instead of moving it back: seconds instead of
// minutes, for CAPD only, whose nodes are containers. why is added to the
// returned how, so the cleanup log says why the cluster went this way.
func RemoveContainers(why string) SelfHostedFunc {
	return func(ctx context.Context, r run.Resource) (string, error) {
		s, until := cleanup.RunOf(ctx)
		note := "self-hosted"
		if why != "" {
			note += "; " + why
		}
		return removeRunsContainers(ctx, r, node.IdentityOf(s, until), note)
	}
}

// RemoveManaged is the ManagedFunc that removes a managed cluster's node and
// load balancer containers the run recorded, by ID, instead of deleting it
// through its management cluster (CAPD only). why is added to the returned
// how.
func RemoveManaged(why string) ManagedFunc {
	return func(ctx context.Context, r run.Resource) (string, error) {
		s, until := cleanup.RunOf(ctx)
		return removeRunsContainers(ctx, r, node.IdentityOf(s, until), why)
	}
}

// removeRunsContainers removes the run's containers of r by ID and says so,
// with note in parentheses and what it left alone.
func removeRunsContainers(ctx context.Context, r run.Resource, id node.Identity, note string) (string, error) {
	removed, leftAlone, err := node.RemoveOwned(ctx, r, id)
	if err != nil {
		return "", err
	}
	how := fmt.Sprintf("removed the run's %d containers by ID (%s)", len(removed), strings.Join(removed, ", "))
	if note != "" {
		how += " (" + note + ")"
	}
	if len(leftAlone) > 0 {
		how += "; " + strings.Join(leftAlone, "; ")
	}
	return how, nil
}

// ownerOf says which containers labelled with a cluster's name are the run's.
type ownerOf struct {
	r  run.Resource
	id node.Identity
}

func (o *ownerOf) mine(ctx context.Context) (mine []node.ContainerInfo, others []string, err error) {
	cs, err := node.ListCluster(ctx, o.r.Name)
	if err != nil {
		return nil, nil, err
	}
	mine, others = node.Split(node.Claim(cs, o.r, o.id))
	return mine, others, nil
}

// RecordContainers records in the run state what identifies the cluster for
// certain: the Cluster object's UID and the IDs of its node and load
// balancer containers (CAPD's: named after the Machines, and
// "<cluster>-lb"). Create calls it once the Machines are Running; a later
// call adds containers made since. Clusters whose nodes are not containers
// (CAPV) record the UID only.
func RecordContainers(ctx context.Context, mgmt *kube.Cluster, managedBy string, s *run.State, namespace, name string, machines []Machine, docker bool) error {
	key := run.Resource{Kind: ResourceKind, Namespace: namespace, Name: name}.Key()
	c := &clusterv1.Cluster{}
	if err := mgmt.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, c); err != nil {
		return fmt.Errorf("reading Cluster %s/%s to record its UID: %w", namespace, name, err)
	}
	if err := node.SetAttribute(s, key, AttrClusterUID, string(c.UID)); err != nil {
		return err
	}
	if err := node.SetAttribute(s, key, AttrClusterUIDIn, managedBy); err != nil {
		return err
	}
	if !docker {
		return nil
	}
	names := map[string]bool{name + "-lb": true}
	for _, m := range machines {
		names[MachineContainerName(name, m.Name)] = true
		if m.NodeName != "" {
			names[m.NodeName] = true
		}
	}
	_, err := node.RecordContainers(ctx, s, key, names)
	return err
}

// MachineContainerName is how CAPD names a Machine's container.
func MachineContainerName(cluster, machine string) string {
	if strings.HasPrefix(machine, cluster) {
		return machine
	}
	return cluster + "-" + machine
}

// halfMoved says whether the Cluster object of r is gone from the cluster
// that held it but present (and then unpaused) on the cluster itself.
func halfMoved(ctx context.Context, r run.Resource) bool {
	managedBy := r.Attributes[AttrManagedBy]
	if managedBy == "" || r.Kubeconfig == "" || managedBy == r.Kubeconfig {
		return false
	}
	key := client.ObjectKey{Namespace: r.Namespace, Name: r.Name}
	holder, err := kube.Connect(managedBy)
	if err != nil || holder.Ready(ctx) != nil {
		return false
	}
	if err := holder.Client.Get(ctx, key, &clusterv1.Cluster{}); !apierrors.IsNotFound(err) {
		return false
	}
	self, err := kube.Connect(r.Kubeconfig)
	if err != nil {
		return false
	}
	c := &clusterv1.Cluster{}
	if err := self.Client.Get(ctx, key, c); err != nil {
		return false
	}
	if paused(c) {
		_ = unpause(ctx, self, c)
	}
	return true
}
