package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"

	"github.com/tkg-e2e/harness/suites"
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
	for _, s := range suites.Lifecycle.Stages() {
		Context(s.Name, Label(suites.Lifecycle.Labels(s.Name)...), func() {
			s.Spec(context.Background(), func() *suites.Env { return env })
		})
	}
})
