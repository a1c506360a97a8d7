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
		suites.OVASpec(func() suites.OVASpecInput { return suites.OVASpecInput{Env: getEnv()} })
	})
	Context(stages.Bootstrap, Label(stages.Labels(stages.Bootstrap)...), func() {
		suites.BootstrapSpec(func() suites.BootstrapSpecInput { return suites.BootstrapSpecInput{Env: getEnv()} })
	})
	Context(stages.Management, Label(stages.Labels(stages.Management)...), func() {
		suites.ManagementSpec(func() suites.ManagementSpecInput { return suites.ManagementSpecInput{Env: getEnv()} })
	})
	Context(stages.Move, Label(stages.Labels(stages.Move)...), func() {
		suites.MoveSpec(func() suites.MoveSpecInput { return suites.MoveSpecInput{Env: getEnv()} })
	})
	Context(stages.Workload, Label(stages.Labels(stages.Workload)...), func() {
		suites.WorkloadSpec(func() suites.WorkloadSpecInput { return suites.WorkloadSpecInput{Env: getEnv()} })
	})
	Context(stages.Placement, Label(stages.Labels(stages.Placement)...), func() {
		suites.PlacementSpec(func() suites.PlacementSpecInput { return suites.PlacementSpecInput{Env: getEnv()} })
	})
	Context(stages.Packages, Label(stages.Labels(stages.Packages)...), func() {
		suites.PackagesSpec(func() suites.PackagesSpecInput { return suites.PackagesSpecInput{Env: getEnv()} })
	})
})
