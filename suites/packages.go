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
	assertionSpec{
		It:    "reconciles every expected PackageInstall",
		Stage: stages.Packages, Interval: "wait-reconcile", Entry: "packages",
		Setting: "packages.expected", File: func(env *Env) string { return env.Config.Packages.Expected },
		Check: func(path string) (assert.Check, error) {
			l, err := packages.Load(path)
			return packages.NewCheck(l), err
		},
	}.define(func() *Env { return inputGetter().Env })
}

// assertionSpec is a stage that runs one check of the assertion engine
// (framework/assert) on the clusters of the run: placement and packages.
type assertionSpec struct {
	It              string
	Stage, Interval string
	// Entry names the Ginkgo report entry that carries the Markdown report.
	Entry string
	// Setting is the config key of the file the check loads, and File reads it.
	Setting string
	File    func(*Env) string
	Check   func(path string) (assert.Check, error)
	// Keep, when set, leaves out targets.
	Keep func(assert.Target) bool
	// Done, when set, records what later stages need from the outcome.
	Done func(*Env, *assert.Outcome)
}

func (s assertionSpec) define(envGetter func() *Env) {
	var env *Env
	BeforeEach(func() {
		env = envGetter()
		Expect(env.Validate()).To(Succeed())
		Expect(s.File(env)).NotTo(BeEmpty(), "config %s is empty", s.Setting)
	})

	It(s.It, func(ctx SpecContext) {
		RunStage(ctx, env, s.Stage, StageFuncs{Run: func(ctx context.Context) error {
			check, err := s.Check(s.File(env))
			if err != nil {
				return err
			}
			out, err := s.run(ctx, env, check)
			if err != nil {
				return err
			}
			if s.Done != nil {
				s.Done(env, out)
			}
			AddReportEntry(s.Entry, out.Markdown)
			return out.Err()
		}})
	})
}

// run connects to the clusters of the run and lets the engine check them
// with the stage's interval, writing its files through the artifacts Writer.
func (s assertionSpec) run(ctx context.Context, env *Env, check assert.Check) (*assert.Outcome, error) {
	var targets []assert.Target
	for _, c := range env.Clusters() {
		if !assert.IsRole(c.Role) {
			continue
		}
		k, err := kube.Connect(c.Kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("%s cluster %q: %w", c.Role, c.Name, err)
		}
		if t := (assert.Target{Role: c.Role, Name: c.Name, Namespace: c.Namespace, Cluster: k}); s.Keep == nil || s.Keep(t) {
			targets = append(targets, t)
		}
	}
	w, err := env.newWriter(env.ArtifactFolder)
	if err != nil {
		return nil, err
	}
	iv := env.Config.MustInterval(s.Stage, s.Interval)
	return assert.Run(ctx, check, targets, w, assert.Options{Timeout: iv.Timeout, Interval: iv.Poll,
		Redactor: env.Redactor, Progress: env.Out})
}
