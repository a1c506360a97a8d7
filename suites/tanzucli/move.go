package tanzucli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/kind"
	"github.com/tkg-e2e/harness/framework/node"
	"github.com/tkg-e2e/harness/framework/tanzu"
	"github.com/tkg-e2e/harness/suites"
)

// This file is the move stage with the tanzu driver: the CLI's move, checked after the fact.

func tanzuMoveBinding(ctx context.Context, env func() *suites.Env) {
	TanzuMoveSpec(ctx, func() TanzuMoveSpecInput {
		e := env()
		return TanzuMoveSpecInput{Env: e, Reconcile: e.Interval("move", "reconcile"), SettleAfter: e.Interval("move", "settle-after")}
	})
}

// TanzuMoveSpecInput is the input of TanzuMoveSpec.
type TanzuMoveSpecInput struct {
	Env *suites.Env
	// Reconcile bounds the wait for the Machines Running with nodes and the
	// Cluster Available; SettleAfter is how long they must then stay the
	// same (move/reconcile, move/settle-after).
	Reconcile, SettleAfter config.Interval
}

func (in TanzuMoveSpecInput) StageOf() (*suites.Env, string) { return in.Env, "move" }

func (in TanzuMoveSpecInput) Validate() error {
	return suites.InputErrors(in.Env, suites.Unless(in.Reconcile.Timeout > 0, "Reconcile.Timeout must be positive (interval move/reconcile)"))
}

// TanzuMoveSpec checks the move `tanzu management-cluster create` did.
func TanzuMoveSpec(_ context.Context, inputGetter func() TanzuMoveSpecInput) {
	suites.DeclareStage("checks the move tanzu management-cluster create did", inputGetter, func(input TanzuMoveSpecInput) suites.StageFuncs {
		env := input.Env
		return suites.StageFuncs{
			Run: func(ctx context.Context) error {
				res := tanzuResult(env, suites.RoleManagement)
				phases, err := tanzuMovePhases(res)
				if len(phases) > 0 {
					reportPhases(env, "move", res, phases)
				}
				if err != nil {
					return err
				}
				to := env.Cluster(suites.RoleManagement)
				if to == nil {
					return suites.ErrNoCluster(suites.RoleManagement)
				}
				if err := tanzuNoRollout(ctx, env.Run, to, input.Reconcile, input.SettleAfter); err != nil {
					return err
				}
				return tanzuBootstrapGone(ctx, env, kindContainersGone)
			},
			Reattach: func(ctx context.Context) error { return nil },
		}
	})
}

// tanzuMovePhases are the move's phases of the management create, or an
// error when the CLI's output shows no move. Nil without an error when
// the management stage was re-attached (RESUME=1): its transcript is the
// kept run's.
func tanzuMovePhases(res *tanzu.Result) ([]tanzu.Phase, error) {
	if res == nil {
		return nil, nil
	}
	var phases []tanzu.Phase
	for _, p := range res.Phases {
		if p.Name == tanzu.PhaseMovePrepare || p.Name == tanzu.PhaseMove || p.Name == tanzu.PhaseBootstrapDelete {
			phases = append(phases, p)
		}
	}
	if !hasPhase(res, tanzu.PhaseMove) {
		return phases, fmt.Errorf("%s passed but its output shows no move (\"Moving all Cluster API objects from bootstrap cluster to management cluster...\"); phases: %s",
			res.Command, phaseNames(res.Phases))
	}
	return phases, nil
}

// kindContainersGone fails when a container of the kind cluster is left.
func kindContainersGone(ctx context.Context, name string) error {
	cs, err := node.ListCluster(ctx, name)
	if err != nil {
		return err
	}
	if len(cs) > 0 {
		var names []string
		for _, c := range cs {
			names = append(names, c.Name)
		}
		return fmt.Errorf("the tanzu CLI left the kind bootstrap cluster %s's containers after the move: %s", name, strings.Join(names, ", "))
	}
	return nil
}

// tanzuBootstrapGone checks that every kind cluster the management create
// announced is gone, and marks it deleted in the run state.
func tanzuBootstrapGone(ctx context.Context, env *suites.Env, gone func(ctx context.Context, name string) error) error {
	var errs []error
	for _, r := range env.State.Live() {
		if r.Kind != kind.ResourceKind || r.CreatedBy != "management" {
			continue
		}
		if err := gone(ctx, r.Name); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := env.State.SetResourceState(r.Key(), "deleted"); err != nil {
			errs = append(errs, err)
		}
		env.Printf("[move] the kind bootstrap cluster %s is gone, as the CLI said", r.Name)
	}
	env.DropCluster(suites.RoleBootstrap)
	return errors.Join(errs...)
}
