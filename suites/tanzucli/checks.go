package tanzucli

import (
	"context"
	"fmt"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/clusters"
	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/infrastructure"
	"github.com/tkg-e2e/harness/framework/move"
	"github.com/tkg-e2e/harness/framework/tanzu"
	"github.com/tkg-e2e/harness/framework/wait"
	"github.com/tkg-e2e/harness/suites"
)

// The harness's own checks of what the tanzu CLI made: the CLI's "created"
// is its word, these are the harness's.

// setTanzuResult keeps the last tanzu command of a role for later stages
// (the move stage reads the management create's phases).
func setTanzuResult(e *suites.Env, role string, res *tanzu.Result) {
	if res == nil {
		return
	}
	v, loaded := results.LoadOrStore(e, &sync.Map{})
	if !loaded {
		// The results are the run's: dropped when its Env closes, so a
		// process that builds many Envs (the tests) does not keep them.
		e.AddCloser("tanzu results", func(context.Context) error { results.Delete(e); return nil })
	}
	v.(*sync.Map).Store(role, res)
}

// results are the last tanzu command of each role, by run (Env).
var results sync.Map

// tanzuResult is the last tanzu command of a role, or nil.
func tanzuResult(e *suites.Env, role string) *tanzu.Result {
	v, ok := results.Load(e)
	if !ok {
		return nil
	}
	res, _ := v.(*sync.Map).Load(role)
	r, _ := res.(*tanzu.Result)
	return r
}

// tanzuClusterReady waits until the Cluster object of c, on holder, is
// Available and every one of its Machines is Running with a node.
func tanzuClusterReady(ctx context.Context, env *suites.Run, stage string, holder, c *suites.Cluster, iv config.Interval) error {
	if holder == nil || c == nil {
		return fmt.Errorf("the tanzu CLI passed but the %s stage has no cluster to check (holder %v, cluster %v)", stage, holder != nil, c != nil)
	}
	k, err := holder.Connect()
	if err != nil {
		return err
	}
	return wait.For(ctx, wait.Options{What: fmt.Sprintf("Cluster %s/%s Available with every Machine Running with a node", c.Namespace, c.Name),
		Timeout: iv.Timeout, Interval: iv.Poll, Progress: env.Out, Prefix: "[" + stage + "]"},
		func(ctx context.Context) (bool, string, error) {
			cl := &clusterv1.Cluster{}
			if err := k.Client.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: c.Name}, cl); err != nil {
				return false, "", err
			}
			ms, err := clusters.Machines(ctx, k.Client, c.Namespace, c.Name)
			if err != nil {
				return false, "", err
			}
			ok, state := clusters.MachinesSummary(ms, len(ms))
			return clusters.Available(cl) && ok == len(ms) && len(ms) > 0, state + "; Cluster " + clusters.ClusterState(cl), nil
		})
}

// tanzuNoRollout checks the self-hosted management cluster after the
// CLI's move: its own Cluster is there and unpaused, its Machines reconcile
// Running with nodes, and then keep their names, provider IDs and UIDs
// for settle (a move that replaced a Machine shows as a rollout).
func tanzuNoRollout(ctx context.Context, env *suites.Run, to *suites.Cluster, reconcile, settle config.Interval) error {
	k, err := to.Connect()
	if err != nil {
		return err
	}
	before, err := clusters.Machines(ctx, k.Client, to.Namespace, to.Name)
	if err != nil {
		return err
	}
	if len(before) == 0 {
		return fmt.Errorf("after the tanzu CLI's move, the management cluster %s holds no Machine of its own in %s: the move did not land", to.Name, to.Namespace)
	}
	after, err := move.Settle(ctx, move.SettleInput{Target: k, Namespace: to.Namespace, ClusterName: to.Name, Before: before,
		Reconcile: reconcile, Settle: settle, Progress: env.Out, Prefix: "[move]"})
	if err != nil {
		return err
	}
	AddReportEntry("move (tanzu CLI)", fmt.Sprintf("self-hosted Cluster %s/%s; machines: %d, unchanged for %s", to.Namespace, to.Name, len(after), settle.Timeout))
	return nil
}

// attachWorkload reads the workload cluster's kubeconfig from its Cluster
// API Secret on the management cluster (what `tanzu cluster kubeconfig get
// --admin` prints), waits for its API, and attaches it.
func attachWorkload(ctx context.Context, env *suites.Env, mgmt *suites.Cluster, in TanzuWorkloadSpecInput) error {
	k, err := mgmt.Connect()
	if err != nil {
		return err
	}
	path := env.KubeconfigPath(in.Cluster.Name)
	if _, err := clusters.WaitAPI(ctx, clusters.WaitAPIInput{Management: k, Namespace: in.Cluster.Namespace, Name: in.Cluster.Name,
		KubeconfigPath: path, Timeout: in.WaitAPI.Timeout, Interval: in.WaitAPI.Poll, Progress: env.Out, Prefix: "[workload]"}); err != nil {
		return err
	}
	env.SetCluster(&suites.Cluster{Role: suites.RoleWorkload, Name: in.Cluster.Name, Namespace: in.Cluster.Namespace, Kubeconfig: path, Infrastructure: in.Infrastructure})
	return nil
}

// attachTanzuCluster re-attaches (RESUME=1) to a cluster the tanzu CLI
// made in the kept run, checking its API answers.
func attachTanzuCluster(ctx context.Context, env *suites.Env, kind, role string) error {
	r, ok := env.State.Resource(kind, role)
	if !ok {
		return fmt.Errorf("the state file lists no %s cluster made by the tanzu CLI", role)
	}
	if r.State != "ready" {
		return fmt.Errorf("the %s cluster %s is %q in the kept run, not ready", role, r.Name, r.State)
	}
	return suites.ReattachCluster(ctx, env, &suites.Cluster{Role: role, Name: r.Name, Namespace: r.Namespace, Kubeconfig: r.Kubeconfig, Infrastructure: infrastructure.Parse(r.Attributes["provider"])})
}
