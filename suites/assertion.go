package suites

import (
	"context"
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tkg-e2e/harness/framework/assert"
	"github.com/tkg-e2e/harness/framework/config"
)

// AssertionSpecInput is the input of AssertionSpec: one check of the
// assertion engine (framework/assert) on clusters of the run.
type AssertionSpecInput struct {
	Env *Env
	// Stage is the stage name used for state, report entries and progress.
	Stage string
	// Load reads the check's file (the placement matrix, the package list);
	// errors name the file and the row.
	Load func() (assert.Check, error)
	// Clusters are checked when their role is one of assert.Roles.
	Clusters []*Cluster
	Wait     config.Interval
	// Keep, when set, leaves targets out (a role filter, say).
	Keep func(assert.Target) bool
	// PostCheck runs with the outcome, passed or not.
	PostCheck func(ctx context.Context, out *assert.Outcome)
}

func (in AssertionSpecInput) validate() error {
	var errs []error
	if err := in.Env.Validate(); err != nil {
		errs = append(errs, err)
	}
	if in.Stage == "" || in.Load == nil || in.Wait.Timeout <= 0 {
		errs = append(errs, errors.New("Stage, Load and Wait (an interval) are required"))
	}
	return errors.Join(errs...)
}

// AssertionSpec runs one check on every cluster of the run whose role the
// engine knows, writes its Markdown and HTML through the artifacts Writer and
// fails with the whole report when any row fails.
func AssertionSpec(_ context.Context, it string, inputGetter func() AssertionSpecInput) {
	var input AssertionSpecInput
	BeforeEach(func() {
		input = inputGetter()
		Expect(input.validate()).To(Succeed(), "invalid AssertionSpecInput")
	})

	It(it, func(ctx SpecContext) {
		env := input.Env
		RunStage(ctx, env, input.Stage, StageFuncs{Run: func(ctx context.Context) error {
			check, err := input.Load()
			if err != nil {
				return err
			}
			var targets []assert.Target
			for _, c := range input.Clusters {
				if !assert.IsRole(c.Role) {
					continue
				}
				k, err := c.Connect()
				if err != nil {
					return err
				}
				if t := (assert.Target{Role: c.Role, Name: c.Name, Namespace: c.Namespace, Cluster: k}); input.Keep == nil || input.Keep(t) {
					targets = append(targets, t)
				}
			}
			w, err := env.newWriter(env.ArtifactFolder)
			if err != nil {
				return err
			}
			out, err := assert.Run(ctx, check, targets, w, assert.Options{Timeout: input.Wait.Timeout, Interval: input.Wait.Poll,
				Redactor: env.Redactor, Progress: env.Out})
			if err != nil {
				return err
			}
			if input.PostCheck != nil {
				input.PostCheck(ctx, out)
			}
			AddReportEntry(input.Stage, out.Markdown)
			return out.Err()
		}})
	})
}
