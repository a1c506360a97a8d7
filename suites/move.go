package suites

import (
	"context"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tkg-e2e/harness/framework/kind"
	"github.com/tkg-e2e/harness/framework/move"
	"github.com/tkg-e2e/harness/framework/stages"
)

// MoveSpecInput is the input of MoveSpec.
type MoveSpecInput struct {
	Env *Env
	// KeepBootstrap keeps the kind cluster after the move (TKG deletes it).
	KeepBootstrap bool
}

// MoveSpec moves the management cluster's Cluster API objects from the kind
// cluster into the management cluster itself with `clusterctl move`, checks
// that nothing was lost (per-kind inventory), nothing is left on the source,
// the target is not paused and no Machine was replaced, then deletes kind.
func MoveSpec(inputGetter func() MoveSpecInput) {
	var input MoveSpecInput
	BeforeEach(func() {
		input = inputGetter()
		Expect(input.Env.Validate()).To(Succeed())
	})

	It("moves the management cluster into itself without losing or replacing anything", func(ctx SpecContext) {
		env := input.Env
		cfg := env.Config
		RunStage(ctx, env, stages.Move, StageFuncs{
			Run: func(ctx context.Context) error {
				from, to := env.Cluster(RoleBootstrap), env.Cluster(RoleManagement)
				if from == nil {
					return errNoCluster(RoleBootstrap)
				}
				if to == nil {
					return errNoCluster(RoleManagement)
				}
				mv, pre, settle := cfg.MustInterval(stages.Move, "move"), cfg.MustInterval(stages.Move, "pre-check"), cfg.MustInterval(stages.Move, "settle")
				res, err := move.Move(ctx, move.Input{FromKubeconfig: from.Kubeconfig, ToKubeconfig: to.Kubeconfig,
					Namespace: to.Namespace, ClusterName: to.Name, ClusterctlConfigPath: cfg.Clusterctl.ConfigPath, State: env.State,
					Timeouts: move.Timeouts{PreCheck: pre.Timeout, SettleBefore: settle.Timeout, Discovery: mv.Timeout, Move: mv.Timeout,
						PostCheck: mv.Timeout, Reconcile: mv.Timeout, SettleAfter: settle.Timeout, Interval: settle.Poll},
					Progress: env.Out, Prefix: "[move]"})
				if res != nil {
					reportMove(env, res)
				}
				if err != nil {
					return err
				}
				if input.KeepBootstrap {
					return nil
				}
				if err := kind.Delete(ctx, kind.DeleteInput{Name: from.Name, KubeconfigPath: from.Kubeconfig,
					State: env.State, Timeout: cfg.MustInterval("cleanup", "wait-delete").Timeout, Progress: env.Out, Prefix: "[move]"}); err != nil {
					return fmt.Errorf("the move passed but deleting the kind cluster failed: %w", err)
				}
				env.DropCluster(RoleBootstrap)
				return nil
			},
			// A passed move leaves the management cluster self-hosted; re-attaching
			// to it is the management stage's check.
			Reattach: func(ctx context.Context) error { return nil },
		})
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
	reportSteps(env, stages.Move, res.Steps)
	AddReportEntry("move inventory", b.String())
	env.Printf("[move] inventory:\n%s", b.String())
}
