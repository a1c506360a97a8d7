package clusters

import (
	"context"
	"fmt"
	"io"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/node"
	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/framework/wait"
)

// Deleter returns cleanup's deleter of capi-cluster resources: through the
// cluster that holds the Cluster object (Delete, bounded by timeout). When
// that cluster does not answer, or the cluster is self-hosted (a management
// cluster after `clusterctl move`, which cannot delete itself), its node and
// load balancer containers are removed by docker label instead. Cleanup
// marks the resource deleted.
func Deleter(timeout, interval time.Duration, progress io.Writer, prefix string) func(ctx context.Context, r run.Resource) (string, error) {
	return DeleterWith(timeout, interval, progress, prefix, nil)
}

// SelfHostedFunc deletes a self-hosted management cluster the way that works
// on every provider: move it back into a throw-away bootstrap cluster, then
// delete it there through Cluster API (what `tanzu management-cluster
// delete` does). It returns how.
type SelfHostedFunc func(ctx context.Context, r run.Resource) (string, error)

// DeleterWith is Deleter with a way out for self-hosted clusters: with
// selfHosted set, a self-hosted cluster goes through it instead of having
// its containers removed by label (which only exists for CAPD, and on
// vSphere would leave every VM behind).
func DeleterWith(timeout, interval time.Duration, progress io.Writer, prefix string, selfHosted SelfHostedFunc) func(ctx context.Context, r run.Resource) (string, error) {
	return func(ctx context.Context, r run.Resource) (string, error) {
		p := wait.Printer{W: progress, Prefix: prefix}
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
		if managedBy := r.Attributes[AttrManagedBy]; !selfHosted && managedBy != "" {
			mgmt, err := kube.Connect(managedBy)
			if err == nil {
				err = mgmt.Ready(ctx)
			}
			if err == nil {
				err = Delete(ctx, DeleteInput{Management: mgmt, Namespace: r.Namespace, Name: r.Name,
					Timeout: timeout, Interval: interval, Progress: progress, Prefix: prefix})
				if err == nil {
					return "deleted through its management cluster", nil
				}
				if ctx.Err() != nil {
					return "", err
				}
			}
			p.Printf("cleanup: %s: cannot delete through %s (%v); removing its containers", r.Key(), managedBy, err)
		}
		removed, err := node.RemoveClusterContainers(ctx, r.Name)
		if err != nil {
			return "", err
		}
		how := fmt.Sprintf("removed %d containers by label %s=%s", len(removed), node.ClusterLabel, r.Name)
		if selfHosted {
			how += " (self-hosted)"
		}
		return how, nil
	}
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
