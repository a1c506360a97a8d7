package suites

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/kind"
	"github.com/tkg-e2e/harness/framework/move"
	"github.com/tkg-e2e/harness/framework/stages"
)

// Move moves the management cluster's Cluster API objects into itself.
var Move = Stage{
	Definition: stages.Definition{Name: "move", Needs: []string{"management"}, Category: stages.Provider,
		Intervals: []string{"pre-check", "settle-before", "discovery", "move", "post-check", "reconcile", "settle-after", "delete-kind"},
		Doc:       "`clusterctl move` from kind into the management cluster, checked, kind deleted"},
	// The settle period and the kind deletion run beside the workload
	// stage, which needs only a management cluster that reconciled itself.
	JoinAfter: "workload",
	Spec: func(ctx context.Context, env func() *Env) {
		MoveSpec(ctx, func() MoveSpecInput {
			e := env()
			iv := func(k string) config.Interval { return e.Interval("move", k) }
			return MoveSpecInput{Env: e, From: e.Cluster(RoleBootstrap), To: e.Cluster(RoleManagement),
				ClusterctlConfigPath: e.ClusterctlConfig(""),
				Timeouts: move.Timeouts{PreCheck: iv("pre-check"), SettleBefore: iv("settle-before"), Discovery: iv("discovery"),
					Move: iv("move"), PostCheck: iv("post-check"), Reconcile: iv("reconcile"), SettleAfter: iv("settle-after")},
				DeleteKind: iv("delete-kind").Timeout}
		})
	},
}

// MoveSpecInput is the input of MoveSpec.
type MoveSpecInput struct {
	Env *Env
	// From is the bootstrap cluster, To the management cluster that takes over.
	From, To             *Cluster
	ClusterctlConfigPath string
	Timeouts             move.Timeouts
	// DeleteKind bounds deleting the kind cluster after the move.
	DeleteKind time.Duration
	// KeepBootstrap keeps the kind cluster after the move (TKG deletes it).
	KeepBootstrap bool
}

func (in MoveSpecInput) StageOf() (*Env, string) { return in.Env, "move" }

func (in MoveSpecInput) Validate() error {
	return InputErrors(in.Env, Unless(in.KeepBootstrap || in.DeleteKind > 0, "DeleteKind must be positive unless KeepBootstrap is set"))
}

// MoveSpec moves the management cluster's Cluster API objects from the kind
// cluster into the management cluster itself with `clusterctl move`, checks
// that nothing was lost (per-kind inventory), nothing is left on the source,
// the target is not paused and no Machine was replaced, and deletes kind
// while the last of those (the settle period) runs.
func MoveSpec(_ context.Context, inputGetter func() MoveSpecInput) {
	DeclareStage("moves the management cluster into itself without losing or replacing anything", inputGetter, func(input MoveSpecInput) StageFuncs {
		env := input.Env
		return StageFuncs{
			Run: func(ctx context.Context) error {
				from, to := input.From, input.To
				if from == nil {
					return ErrNoCluster(RoleBootstrap)
				}
				if to == nil {
					return ErrNoCluster(RoleManagement)
				}
				startTeardownAtMove(env)
				in := move.Input{FromKubeconfig: from.Kubeconfig, ToKubeconfig: to.Kubeconfig,
					Namespace: to.Namespace, ClusterName: to.Name, ClusterctlConfigPath: input.ClusterctlConfigPath, State: env.State,
					Timeouts: input.Timeouts, DeferSettle: true, Progress: env.Out, Prefix: "[move]"}
				defer env.moveWatches(&in, from, to)()
				vms, err := snapshotVMs(ctx, env, to.Name)
				if err != nil {
					return err
				}
				res, err := move.Move(ctx, in)
				if res != nil {
					reportMove(env, res)
				}
				if err != nil {
					return err
				}
				// The moved objects are on the management cluster, unpaused,
				// and its controllers run since the management stage: it can
				// serve the workload cluster's creation while its own Machines
				// are watched (reconciled, then unchanged) and kind, with
				// nothing of the cluster left on it, is deleted.
				env.StartTail("move", tailWhat(res, input.KeepBootstrap), func(ctx context.Context) (TailResult, error) {
					return moveTail(ctx, env, input, res, vms)
				})
				return nil
			},
			// A passed move leaves the management cluster self-hosted; re-attaching
			// to it is the management stage's check.
			Reattach: func(ctx context.Context) error { return nil },
		}
	})
}

// tailWhat names what the move leaves running beside the stages after it.
func tailWhat(res *move.Result, keepBootstrap bool) string {
	var parts []string
	if res.Settle != nil {
		parts = append(parts, "the reconcile and settle-after checks (the moved Machines Running, then unchanged)")
	}
	if !keepBootstrap {
		parts = append(parts, "deleting the kind cluster")
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, " and ")
}

// moveTail runs the settle period and deletes kind, side by side, and
// returns their steps and the report of the Machines after the move.
func moveTail(ctx context.Context, env *Env, input MoveSpecInput, res *move.Result, vms *moveVMs) (TailResult, error) {
	var wg sync.WaitGroup
	var settleErr, kindErr error
	var kindStep *Step
	// Settle adds its reconcile and settle-after steps to res.Steps.
	foreground := len(res.Steps)
	if res.Settle != nil {
		wg.Go(func() { settleErr = res.Settle(ctx) })
	}
	if !input.KeepBootstrap {
		wg.Go(func() {
			// Out of the run's clusters first: a failure elsewhere meanwhile
			// must not collect a cluster that is going away.
			env.DropCluster(RoleBootstrap)
			start := time.Now()
			kindErr = kind.Delete(ctx, kind.DeleteInput{Name: input.From.Name, KubeconfigPath: input.From.Kubeconfig,
				State: env.State, Timeout: input.DeleteKind, Progress: env.Out, Prefix: "[move]"})
			if kindErr != nil {
				kindErr = fmt.Errorf("the move passed its post-check but deleting the kind cluster failed: %w", kindErr)
				return
			}
			kindStep = &Step{Name: "delete-kind", Duration: time.Since(start)}
		})
	}
	wg.Wait()
	// After the settle period, when a re-provisioning CAPV would have
	// destroyed or cloned by now.
	vmsSaid, vmsErr := vms.check(ctx)
	if vmsSaid != "" {
		env.Printf("[move] %s", vmsSaid)
	}
	steps := slices.Clone(res.Steps[foreground:])
	if kindStep != nil {
		steps = append(steps, *kindStep)
	}
	err := errors.Join(settleErr, kindErr, vmsErr)
	return TailResult{Steps: steps, Report: func(ctx context.Context) {
		b := fmt.Sprintf("machines before: %d, on the target after the settle period: %d", len(res.MachinesBefore), len(res.MachinesAfter))
		AddReportEntry("move machines", b)
		env.Printf("[move] %s", b)
	}}, err
}

// reportMove reports the move up to the reconcile: what was discovered,
// found on the target, and each step's time.
func reportMove(env *Env, res *move.Result) {
	var b strings.Builder
	if res.Inventory != nil {
		fmt.Fprintf(&b, "discovered on the source: %s\n", res.Inventory.String())
	}
	if res.Target != nil {
		fmt.Fprintf(&b, "found on the target:     %s\n", move.FormatCounts(res.Target))
	}
	if len(res.Diff) > 0 {
		fmt.Fprintf(&b, "differences: %s\n", strings.Join(res.Diff, "; "))
	}
	fmt.Fprintf(&b, "machines before: %d\n", len(res.MachinesBefore))
	StepEntries(env, "move", res.Steps)
	AddReportEntry("move inventory", b.String())
	env.Printf("[move] inventory:\n%s", b.String())
}
