package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"

	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/suites"
	"github.com/tkg-e2e/harness/suites/lifecycle"
)

// One container per registered stage, in registry order. Each carries the
// labels of the stages that need it, so `--label-filter=move` runs
// bootstrap, management and move and nothing after. ContinueOnFailure keeps
// independent stages going (packages still runs when placement fails); a
// stage whose prerequisite failed is skipped with that reason by
// suites.RunStage.
var _ = Describe("TKG lifecycle", Ordered, ContinueOnFailure, func() {
	AfterEach(func(ctx SpecContext) {
		suites.CollectOnFailure(ctx, env, CurrentSpecReport())
	})
	// The tree is built after flags are parsed: the profile's extra needs
	// (CAPV clusters need the ova stage) are in the labels, and the
	// driver's specs (driver: tanzu) replace the stages' own.
	peek := config.Peek(profile.ConfigPath(), profile.Overrides())
	reg := lifecycle.Registry.ForProfile(peek.Profile).ForDriver(peek.Driver)
	envOf := func() *suites.Env { return env }
	for _, s := range reg.Stages() {
		Context(s.Name, Label(reg.Labels(s.Name)...), func() {
			s.Spec(context.Background(), envOf)
		})
		// A stage's join (the check it left running beside the stages after
		// it) is a spec of that stage, declared after the stage it overlaps.
		for _, j := range reg.JoinsAfter(s.Name) {
			Context(j.Name, Label(reg.Labels(j.Name)...), func() {
				suites.JoinSpec(j.Name, envOf)
			})
		}
	}
})
