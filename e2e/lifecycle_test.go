package e2e

import (
	. "github.com/onsi/ginkgo/v2"

	"github.com/tkg-e2e/harness/framework/stages"
	"github.com/tkg-e2e/harness/suites"
)

// The stages run in this order. Each carries the labels of the stages that
// need it (stages.Labels), so `--label-filter=move` runs bootstrap,
// management and move and nothing after. ContinueOnFailure keeps independent
// stages going (packages still runs when placement fails); a stage whose
// prerequisite failed is skipped with that reason by suites.RunStage.
var _ = Describe("TKG lifecycle", Ordered, ContinueOnFailure, func() {
	getEnv := func() *suites.Env { return env }

	AfterEach(func(ctx SpecContext) {
		suites.CollectOnFailure(ctx, env, CurrentSpecReport())
	})

	Context(stages.OVA, Label(stages.Labels(stages.OVA)...), func() {
		suites.OVASpec(getEnv)
	})
	Context(stages.Bootstrap, Label(stages.Labels(stages.Bootstrap)...), func() {
		suites.BootstrapSpec(getEnv)
	})
	Context(stages.Management, Label(stages.Labels(stages.Management)...), func() {
		suites.ManagementSpec(getEnv)
	})
	Context(stages.Move, Label(stages.Labels(stages.Move)...), func() {
		suites.MoveSpec(getEnv)
	})
	Context(stages.Workload, Label(stages.Labels(stages.Workload)...), func() {
		suites.WorkloadSpec(getEnv)
	})
	Context(stages.Placement, Label(stages.Labels(stages.Placement)...), func() {
		suites.PlacementSpec(getEnv)
	})
	Context(stages.Packages, Label(stages.Labels(stages.Packages)...), func() {
		suites.PackagesSpec(getEnv)
	})
})
