package suites

import (
	"context"
	"fmt"
	"strings"
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
	// PostMove runs after a passed move with its result.
	PostMove func(ctx context.Context, res *move.Result)
}

func (in MoveSpecInput) stage() (*Env, string) { return in.Env, "move" }

func (in MoveSpecInput) validate() error {
	return inputErrors(in.Env, unless(in.KeepBootstrap || in.DeleteKind > 0, "DeleteKind must be positive unless KeepBootstrap is set"))
}

// MoveSpec moves the management cluster's Cluster API objects from the kind
// cluster into the management cluster itself with `clusterctl move`, checks
// that nothing was lost (per-kind inventory), nothing is left on the source,
// the target is not paused and no Machine was replaced, and deletes kind
// while the last of those (the settle period) runs.
func MoveSpec(_ context.Context, inputGetter func() MoveSpecInput) {
	declareStage("moves the management cluster into itself without losing or replacing anything", inputGetter, func(input MoveSpecInput) StageFuncs {
		env := input.Env
		return StageFuncs{
			Run: func(ctx context.Context) error {
				from, to := input.From, input.To
				if from == nil {
					return errNoCluster(RoleBootstrap)
				}
				if to == nil {
					return errNoCluster(RoleManagement)
				}
				in := move.Input{FromKubeconfig: from.Kubeconfig, ToKubeconfig: to.Kubeconfig,
					Namespace: to.Namespace, ClusterName: to.Name, ClusterctlConfigPath: input.ClusterctlConfigPath, State: env.State,
					Timeouts: input.Timeouts, Progress: env.Out, Prefix: "[move]"}
				kindGone := false
				if !input.KeepBootstrap {
					// Nothing is left on kind once the post-check passed, and the
					// settle period watches only the target: kind goes meanwhile.
					in.WhileSettling, in.WhileSettlingStep = func(ctx context.Context) error {
						if err := kind.Delete(ctx, kind.DeleteInput{Name: from.Name, KubeconfigPath: from.Kubeconfig,
							State: env.State, Timeout: input.DeleteKind, Progress: env.Out, Prefix: "[move]"}); err != nil {
							return fmt.Errorf("the move passed its post-check but deleting the kind cluster failed: %w", err)
						}
						kindGone = true
						return nil
					}, "delete-kind"
				}
				res, err := move.Move(ctx, in)
				if kindGone {
					env.DropCluster(RoleBootstrap)
				}
				if res != nil {
					reportMove(env, res)
				}
				if err != nil {
					return err
				}
				if input.PostMove != nil {
					input.PostMove(ctx, res)
				}
				return nil
			},
			// A passed move leaves the management cluster self-hosted; re-attaching
			// to it is the management stage's check.
			Reattach: func(ctx context.Context) error { return nil },
		}
	})
}

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
	fmt.Fprintf(&b, "machines before: %d, after: %d\n", len(res.MachinesBefore), len(res.MachinesAfter))
	StepEntries(env, "move", res.Steps)
	AddReportEntry("move inventory", b.String())
	env.Printf("[move] inventory:\n%s", b.String())
}
