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

	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/node"
	"github.com/tkg-e2e/harness/framework/wait"
)

// DeleteInput is the input of Delete.
type DeleteInput struct {
	// Management holds the Cluster object.
	Management *kube.Cluster
	Namespace  string
	Name       string
	// UID, when set, is the Cluster object's UID as the run recorded it: a
	// Cluster of the same name with another UID is not the run's, and is
	// not deleted.
	UID string
	// Owner, when set, says which containers labelled with the cluster's
	// name are the run's: only those are waited for. Without it, the
	// containers kind or CAPD made (with their role label) are.
	Owner *ownerOf
	// Timeout bounds the deletion, from the delete request until the Cluster
	// object and its containers are gone.
	Timeout  time.Duration
	Interval time.Duration
	Progress io.Writer
	Prefix   string
}

// Delete deletes a Cluster through the cluster that holds it and waits until
// the Cluster object and its node and load balancer containers are gone. A
// Cluster that does not exist (any more) is not an error.
func Delete(ctx context.Context, in DeleteInput) error {
	if in.Management == nil || in.Namespace == "" || in.Name == "" || in.Timeout <= 0 {
		return fmt.Errorf("clusters.Delete: invalid input: Management, Namespace, Name and Timeout (> 0) are required")
	}
	c := &clusterv1.Cluster{}
	err := in.Management.Client.Get(ctx, client.ObjectKey{Namespace: in.Namespace, Name: in.Name}, c)
	switch {
	case apierrors.IsNotFound(err):
		wait.Printer{W: in.Progress, Prefix: in.Prefix}.Printf("Cluster %s/%s does not exist; checking its containers", in.Namespace, in.Name)
	case err != nil:
		return fmt.Errorf("reading Cluster %s/%s: %w", in.Namespace, in.Name, err)
	case in.UID != "" && string(c.UID) != in.UID:
		return fmt.Errorf("Cluster %s/%s has UID %s, not %s as the run recorded: it is not this run's, left alone",
			in.Namespace, in.Name, c.UID, in.UID)
	default:
		if paused(c) {
			// A move interrupted half-way leaves the Cluster paused, and no
			// controller deletes a paused Cluster: waiting would only run
			// out the timeout.
			wait.Printer{W: in.Progress, Prefix: in.Prefix}.Printf("Cluster %s/%s is paused (an interrupted clusterctl move?): unpausing it so its controllers can delete it", in.Namespace, in.Name)
			if err := unpause(ctx, in.Management, c); err != nil {
				return fmt.Errorf("unpausing Cluster %s/%s before deleting it: %w", in.Namespace, in.Name, err)
			}
		}
		if c.DeletionTimestamp == nil {
			if err := in.Management.Client.Delete(ctx, c); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting Cluster %s/%s: %w", in.Namespace, in.Name, err)
			}
		}
	}
	return wait.For(ctx, wait.Options{What: fmt.Sprintf("Cluster %s/%s and its containers deleted", in.Namespace, in.Name),
		Timeout: in.Timeout, Interval: in.Interval, Progress: in.Progress, Prefix: in.Prefix},
		func(ctx context.Context) (bool, string, error) {
			var parts []string
			c := &clusterv1.Cluster{}
			err := in.Management.Client.Get(ctx, client.ObjectKey{Namespace: in.Namespace, Name: in.Name}, c)
			gone := apierrors.IsNotFound(err)
			if err != nil && !gone {
				return false, "", err
			}
			if !gone {
				parts = append(parts, "Cluster "+ClusterState(c))
				if ms, err := Machines(ctx, in.Management.Client, in.Namespace, in.Name); err == nil && len(ms) > 0 {
					var mm []string
					for _, m := range ms {
						mm = append(mm, m.Name+" "+orDash(m.Phase))
					}
					parts = append(parts, fmt.Sprintf("%d machines: %s", len(ms), strings.Join(mm, ", ")))
				}
			}
			cs, err := containersOf(ctx, in)
			if err != nil {
				return false, "", err
			}
			if len(cs) > 0 {
				parts = append(parts, fmt.Sprintf("%d containers: %s", len(cs), strings.Join(cs, ", ")))
			}
			if gone && len(cs) == 0 {
				return true, "Cluster and containers gone", nil
			}
			return false, strings.Join(parts, "; "), nil
		})
}

// containersOf are the names of the cluster's containers Delete waits for:
// the run's (in.Owner), or, without an owner, those kind or CAPD made (a
// container that only carries the cluster's label is not waited for).
func containersOf(ctx context.Context, in DeleteInput) ([]string, error) {
	if in.Owner != nil {
		mine, _, err := in.Owner.mine(ctx)
		var names []string
		for _, c := range mine {
			names = append(names, c.Name)
		}
		return names, err
	}
	nodes, lbs, err := node.ClusterNodes(ctx, in.Name)
	return append(node.Names(nodes), node.Names(lbs)...), err
}

func paused(c *clusterv1.Cluster) bool {
	_, annotated := c.Annotations[clusterv1.PausedAnnotation]
	return annotated || (c.Spec.Paused != nil && *c.Spec.Paused)
}

func unpause(ctx context.Context, mgmt *kube.Cluster, c *clusterv1.Cluster) error {
	patch := client.MergeFrom(c.DeepCopy())
	delete(c.Annotations, clusterv1.PausedAnnotation)
	c.Spec.Paused = nil
	return mgmt.Client.Patch(ctx, c, patch)
}
