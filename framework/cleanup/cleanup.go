// Package cleanup deletes what a run created, driven by the run state
// (framework/run), newest first, and proves afterwards that nothing of the
// run is left on the docker host (containers, networks, kind clusters).
package cleanup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tkg-e2e/harness/framework/bootstrap"
	"github.com/tkg-e2e/harness/framework/clusters"
	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/framework/wait"
)

// Input is the input of Run.
type Input struct {
	State *run.State
	// ClusterDeleteTimeout bounds deleting one Cluster API cluster through its
	// management cluster (the Cluster object and its containers gone).
	ClusterDeleteTimeout time.Duration
	// KindDeleteTimeout bounds deleting one kind cluster.
	KindDeleteTimeout time.Duration
	Interval          time.Duration
	Progress          io.Writer
	Prefix            string
}

// Report says what Run did with each resource.
type Report struct {
	// Deleted resources with how ("capi-cluster/ns/wl: through its management cluster in 25s").
	Deleted []string
	// Failed resources with the error and the hint to delete them by hand.
	Failed []string
	// Skipped resources Run does not know how to delete, with their hint.
	Skipped []string
}

func (r *Report) String() string {
	s := fmt.Sprintf("deleted %d", len(r.Deleted))
	if len(r.Failed) > 0 {
		s += fmt.Sprintf(", FAILED %d: %s", len(r.Failed), strings.Join(r.Failed, "; "))
	}
	if len(r.Skipped) > 0 {
		s += fmt.Sprintf(", skipped %d: %s", len(r.Skipped), strings.Join(r.Skipped, "; "))
	}
	return s
}

// Run deletes every live resource of the run state in reverse creation order
// and marks it deleted:
//   - a Cluster API cluster through the cluster that holds its Cluster object
//     (waiting until the Cluster and its containers are gone); when that
//     cluster does not answer, or the cluster is self-hosted (a management
//     cluster after `clusterctl move`, which cannot delete itself), its CAPD
//     node and load balancer containers are removed by docker label;
//   - a kind cluster with kind.
//
// It is tolerant of partially created things (a Cluster that was never
// applied, containers that never started) and goes on after a failure; the
// error lists every failure with its DeleteHint.
func Run(ctx context.Context, in Input) (*Report, error) {
	if in.State == nil || in.ClusterDeleteTimeout <= 0 || in.KindDeleteTimeout <= 0 {
		return nil, errors.New("cleanup.Run: invalid input: State, ClusterDeleteTimeout and KindDeleteTimeout (> 0) are required")
	}
	p := wait.Printer{W: in.Progress, Prefix: in.Prefix}
	rep := &Report{}
	for _, r := range in.State.Live() {
		if err := ctx.Err(); err != nil {
			rep.Failed = append(rep.Failed, fmt.Sprintf("%s: not deleted, interrupted (by hand: %s)", r.Key(), r.DeleteHint))
			continue
		}
		start := time.Now()
		var how string
		var err error
		switch r.Kind {
		case bootstrap.ResourceKindCluster:
			how = "kind delete"
			err = bootstrap.DeleteKindCluster(ctx, bootstrap.DeleteKindClusterInput{Name: r.Name, KubeconfigPath: r.Kubeconfig,
				State: in.State, Timeout: in.KindDeleteTimeout, Progress: in.Progress, Prefix: in.Prefix})
		case clusters.ResourceKind:
			how, err = deleteCAPICluster(ctx, in, r, p)
		default:
			rep.Skipped = append(rep.Skipped, fmt.Sprintf("%s: unknown kind (by hand: %s)", r.Key(), r.DeleteHint))
			continue
		}
		if err != nil {
			rep.Failed = append(rep.Failed, fmt.Sprintf("%s: %v (by hand: %s)", r.Key(), err, r.DeleteHint))
			p.Printf("cleanup: %s FAILED: %v", r.Key(), err)
			continue
		}
		line := fmt.Sprintf("%s: %s in %s", r.Key(), how, time.Since(start).Round(100*time.Millisecond))
		rep.Deleted = append(rep.Deleted, line)
		p.Printf("cleanup: %s", line)
	}
	if len(rep.Failed) > 0 {
		return rep, fmt.Errorf("cleanup: %d resource(s) not deleted: %s", len(rep.Failed), strings.Join(rep.Failed, "; "))
	}
	return rep, nil
}

func deleteCAPICluster(ctx context.Context, in Input, r run.Resource, p wait.Printer) (string, error) {
	key := r.Key()
	managedBy := r.Attributes[clusters.AttrManagedBy]
	if r.Attributes[clusters.AttrSelfHosted] != "true" && managedBy != "" {
		mgmt, err := kube.Connect(managedBy)
		if err == nil {
			err = mgmt.Ready(ctx)
		}
		if err == nil {
			err = clusters.Delete(ctx, clusters.DeleteInput{Management: mgmt, Namespace: r.Namespace, Name: r.Name, State: in.State,
				Timeout: in.ClusterDeleteTimeout, Interval: in.Interval, Progress: in.Progress, Prefix: in.Prefix})
			if err == nil {
				return "deleted through its management cluster", nil
			}
			if ctx.Err() != nil {
				return "", err
			}
		}
		p.Printf("cleanup: %s: cannot delete through %s (%v); removing its containers", key, managedBy, err)
	}
	cs, err := bootstrap.ClusterContainers(ctx, r.Name)
	if err != nil {
		return "", err
	}
	if err := bootstrap.RemoveContainers(ctx, cs); err != nil {
		return "", err
	}
	if err := in.State.SetResourceState(key, "deleted"); err != nil {
		return "", err
	}
	how := fmt.Sprintf("removed %d containers by label %s=%s", len(cs), bootstrap.ClusterLabel, r.Name)
	if r.Attributes[clusters.AttrSelfHosted] == "true" {
		how += " (self-hosted)"
	}
	return how, nil
}
