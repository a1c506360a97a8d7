package cleanup_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/cluster-api/test/infrastructure/container"

	"github.com/tkg-e2e/harness/framework/cleanup"
	"github.com/tkg-e2e/harness/framework/clusters"
	"github.com/tkg-e2e/harness/framework/kind"
	"github.com/tkg-e2e/harness/framework/node"
	"github.com/tkg-e2e/harness/framework/run"
)

// A container labelled exactly like a run's cluster, that the run did not
// make, survives the run's cleanup and `harness cleanup` of the kept run,
// and is reported, not counted as a leak. The run's own containers are
// removed by ID, recorded or not.
func TestCleanupLeavesADecoyLabelledLikeTheRunsCluster(t *testing.T) {
	for _, how := range []string{"teardown", "clean-run"} {
		t.Run(how, func(t *testing.T) {
			rt, err := container.NewFakeClient()
			if err != nil {
				t.Fatal(err)
			}
			fake := rt.(*container.FakeRuntime)
			fake.ResetDeleteContainerCallLogs()
			ctx := container.RuntimeInto(t.Context(), rt)

			dir := t.TempDir()
			st, err := run.New(dir, "20261122-100000-abcde", "local", "")
			if err != nil {
				t.Fatal(err)
			}
			kindName, mgmt := "tkg-e2e-kind-abcde", "tkg-e2e-mgmt-abcde"
			for _, r := range []run.Resource{
				{Kind: kind.ResourceKind, Name: kindName, State: "ready",
					Attributes: map[string]string{node.AttrContainers: kindName + "-control-plane=id-kind-cp"}},
				// Self-hosted after move: removed by container, never through a management cluster.
				{Kind: clusters.ResourceKind, Namespace: "tkg-system", Name: mgmt, State: "ready",
					Attributes: map[string]string{clusters.AttrSelfHosted: "true", node.AttrContainers: mgmt + "-lb=id-mgmt-lb"}},
			} {
				if err := st.PutResource(r); err != nil {
					t.Fatal(err)
				}
			}
			// Docker's creation times have seconds; the run's state was written since.
			during := st.Started.Truncate(time.Second)
			lbl := func(cluster, role string) map[string]string {
				l := map[string]string{node.ClusterLabel: cluster}
				if role != "" {
					l[node.RoleLabel] = role
				}
				return l
			}
			inv := &node.FakeInventory{Runtime: fake, Nets: []string{"kind", "bridge"}, Containers: []node.ContainerInfo{
				{ID: "id-kind-cp", Name: kindName + "-control-plane", Created: during, Labels: lbl(kindName, "control-plane")},
				{ID: "id-mgmt-lb", Name: mgmt + "-lb", Created: during, Labels: lbl(mgmt, node.RoleLoadBalancer)},
				// A worker CAPD made after the run recorded the cluster's containers.
				{ID: "id-mgmt-md", Name: mgmt + "-md-0-x", Created: during, Labels: lbl(mgmt, "worker")},
				// scripts/test-concurrent-runs.sh's decoy: the label only, made while the run works.
				{ID: "id-decoy-kind", Name: kindName + "-decoy", Created: during, Labels: lbl(kindName, "")},
				{ID: "id-decoy-mgmt", Name: mgmt + "-decoy", Created: during, Labels: lbl(mgmt, "")},
				// A node of an older run that used the same name.
				{ID: "id-old", Name: mgmt + "-md-0-old", Created: st.Started.Add(-time.Hour), Labels: lbl(mgmt, "worker")},
			}}
			ctx = node.InventoryInto(ctx, inv)

			if how == "clean-run" {
				// make clean-run: another process loads the kept run. A newer
				// run of the same name made a node after the kept run's last write.
				if err := st.Close(); err != nil {
					t.Fatal(err)
				}
				if st, err = run.Load(dir); err != nil {
					t.Fatal(err)
				}
				inv.Containers = append(inv.Containers, node.ContainerInfo{ID: "id-newer", Name: mgmt + "-md-0-newer",
					Created: st.Updated.Add(time.Hour), Labels: lbl(mgmt, "worker")})
			}
			t.Cleanup(func() { _ = st.Close() })

			var out strings.Builder
			in := cleanup.Input{State: st, Progress: &out,
				Deleters: map[string]cleanup.Deleter{
					kind.ResourceKind:     kind.Deleter(time.Minute, &out, ""),
					clusters.ResourceKind: clusters.Deleter(time.Minute, time.Second, &out, ""),
				},
				LeakChecks: []cleanup.LeakCheck{node.LeakCheck(kind.ResourceKind, clusters.ResourceKind)}}
			if err := cleanup.All(ctx, in); err != nil {
				t.Fatalf("cleanup: %v\n%s", err, out.String())
			}
			deleted := fake.DeleteContainerCalls()
			slices.Sort(deleted)
			if got := strings.Join(deleted, ","); got != "id-kind-cp,id-mgmt-lb,id-mgmt-md" {
				t.Fatalf("deleted %s; want the run's three containers, by ID\n%s", got, out.String())
			}
			left, _ := inv.ListByLabel(context.Background(), node.ClusterLabel, mgmt)
			if len(left) == 0 {
				t.Fatal("the fake lost the containers that are not the run's")
			}
			for _, want := range []string{kindName + "-decoy", mgmt + "-decoy", mgmt + "-md-0-old"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("the cleanup output does not report %s as left alone:\n%s", want, out.String())
				}
			}
			if !strings.Contains(out.String(), "not this run's") || st.Cleanup != "done: nothing left" {
				t.Errorf("outcome %q; output:\n%s", st.Cleanup, out.String())
			}
			if len(st.Live()) != 0 {
				t.Errorf("resources not marked deleted: %+v", st.Live())
			}
		})
	}
}
