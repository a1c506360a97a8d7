package suites

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tkg-e2e/harness/framework/assert"
	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/packages"
	"github.com/tkg-e2e/harness/framework/stages"
)

// PackagesSpecInput is the input of PackagesSpec.
type PackagesSpecInput struct {
	Env *Env
}

// PackagesSpec waits for every expected PackageInstall of every cluster of the
// run to reach ReconcileSucceeded; on failure the report quotes
// usefulErrorMessage (or the condition message when kapp-controller left it
// empty). Where TKG's ClusterBootstrap CRD exists, its status must mirror them.
func PackagesSpec(inputGetter func() PackagesSpecInput) {
	var input PackagesSpecInput
	BeforeEach(func() {
		input = inputGetter()
		Expect(input.Env.Validate()).To(Succeed())
		Expect(input.Env.Config.Packages.Expected).NotTo(BeEmpty(), "config packages.expected is empty")
	})

	It("reconciles every expected PackageInstall", func(ctx SpecContext) {
		env := input.Env
		RunStage(ctx, env, stages.Packages, StageFuncs{Run: func(ctx context.Context) error {
			list, err := packages.Load(env.Config.Packages.Expected)
			if err != nil {
				return err
			}
			out, err := runAssertion(ctx, env, packages.NewCheck(list), stages.Packages, "wait-reconcile", nil)
			if err != nil {
				return err
			}
			AddReportEntry("packages", out.Markdown)
			return out.Err()
		}})
	})
}

// runAssertion runs an assertion engine check on the clusters of the run
// (those keep reports a Target of) with the stage's interval, writing its
// files through the artifacts Writer.
func runAssertion(ctx context.Context, env *Env, check assert.Check, stage, interval string, keep func(assert.Target) bool) (*assert.Outcome, error) {
	var targets []assert.Target
	for _, c := range env.Clusters() {
		if !assert.IsRole(c.Role) {
			continue
		}
		k, err := kube.Connect(c.Kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("%s cluster %q: %w", c.Role, c.Name, err)
		}
		if t := (assert.Target{Role: c.Role, Name: c.Name, Namespace: c.Namespace, Cluster: k}); keep == nil || keep(t) {
			targets = append(targets, t)
		}
	}
	w, err := env.newWriter(env.ArtifactFolder)
	if err != nil {
		return nil, err
	}
	iv := env.Config.MustInterval(stage, interval)
	return assert.Run(ctx, check, targets, w, assert.Options{Timeout: iv.Timeout, Interval: iv.Poll,
		Redactor: env.Redactor, Progress: env.Out})
}
