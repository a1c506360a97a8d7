package tanzucli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tkg-e2e/harness/framework/cleanup"
	"github.com/tkg-e2e/harness/framework/infrastructure"
	"github.com/tkg-e2e/harness/framework/node"
	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/framework/tanzu"
	"github.com/tkg-e2e/harness/suites"
)

// This file is what the tanzu driver's clusters are deleted with: the CLI, then the run's containers by ID when it cannot.

// tanzuCleanup deletes what the tanzu CLI made with the CLI: workload
// clusters first (cleanup runs in reverse creation order), then the
// management cluster; the leak checks look for their node containers.
func tanzuCleanup(o suites.CleanupOptions) suites.StageCleanup {
	del := func(args func(r run.Resource) []string) cleanup.Deleter {
		return func(ctx context.Context, r run.Resource) (string, error) {
			if o.CLIDelete == nil {
				return "", fmt.Errorf("no tanzu CLI to delete %s with: clean up with the run's config (driver: tanzu), or by hand: %s", r.Key(), r.DeleteHint)
			}
			name := "delete-" + r.Name
			if r.Kind == TanzuManagementKind {
				name = "management-cluster-delete"
			}
			command, err := o.CLIDelete(ctx, name, args(r), o.Prefix)
			if err == nil {
				return command, nil // cleanup adds the time
			}
			// The CLI cannot delete what it never finished making (a create
			// that failed before it saved the management cluster). CAPD's
			// nodes are containers: remove the run's by ID, as the clusterctl
			// deleter does when the holder does not answer; the leak checks
			// then say whether anything is left. Elsewhere (VMs) the error
			// stands, with the hint to delete by hand.
			if !infrastructure.Parse(r.Attributes["provider"]).NodesAreContainers() || ctx.Err() != nil {
				return "", err
			}
			why := err.Error()
			var ce *TanzuCommandError
			if errors.As(err, &ce) {
				why = ce.Failure.Error()
			}
			s, until := cleanup.RunOf(ctx)
			removed, leftAlone, rerr := node.RemoveOwned(ctx, r, node.IdentityOf(s, until))
			if rerr != nil {
				return "", errors.Join(err, rerr)
			}
			how := fmt.Sprintf("the CLI could not delete it (%s); removed the run's %d containers by ID (%s)", why, len(removed), strings.Join(removed, ", "))
			if len(leftAlone) > 0 {
				how += "; " + strings.Join(leftAlone, "; ")
			}
			return how, nil
		}
	}
	return suites.StageCleanup{Deleters: map[string]cleanup.Deleter{
		TanzuClusterKind:    del(func(r run.Resource) []string { return tanzu.ClusterDeleteArgs(r.Name, r.Namespace) }),
		TanzuManagementKind: del(func(run.Resource) []string { return tanzu.ManagementClusterDeleteArgs() }),
	}}
}

// tanzuManagementCleanup is tanzuCleanup with the leak checks of every
// cluster the CLI made (once for the run, as the management stage carries
// the clusterctl driver's vCenter check).
func tanzuManagementCleanup(o suites.CleanupOptions) suites.StageCleanup {
	sc := tanzuCleanup(o)
	sc.LeakChecks = []cleanup.LeakCheck{node.LeakCheck(TanzuManagementKind, TanzuClusterKind)}
	if o.VSphere != nil {
		// CAPV's VMs, which the Docker checks cannot see.
		sc.LeakChecks = append(sc.LeakChecks, suites.VCenterLeakCheck(o, TanzuManagementKind, TanzuClusterKind))
	}
	return sc
}
