package suites

import (
	"context"

	. "github.com/onsi/ginkgo/v2"

	"github.com/tkg-e2e/harness/framework/assert"
	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/stages"
)

// assertionStage is a stage that runs one check of the assertion engine on
// every cluster of the run, waiting with the stage's one interval key.
func assertionStage(def stages.Definition, it string, load func(*Env) (assert.Check, error), post func(*Env, *assert.Outcome)) Stage {
	return Stage{Definition: def, Assertion: load, Spec: func(ctx context.Context, env func() *Env) {
		AssertionSpec(ctx, it, func() AssertionSpecInput {
			e := env()
			in := AssertionSpecInput{Env: e, Stage: def.Name, Clusters: e.Clusters(), Wait: e.Interval(def.Name, def.Intervals[0]),
				Load: func() (assert.Check, error) { return load(e) }}
			if post != nil {
				in.PostCheck = func(_ context.Context, out *assert.Outcome) { post(e, out) }
			}
			return in
		})
	}}
}

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
	// PostCheck runs with the outcome, passed or not.
	PostCheck func(ctx context.Context, out *assert.Outcome)
}

func (in AssertionSpecInput) StageOf() (*Env, string) { return in.Env, in.Stage }

func (in AssertionSpecInput) Validate() error {
	return InputErrors(in.Env, Unless(in.Stage != "" && in.Load != nil && in.Wait.Timeout > 0, "Stage, Load and Wait (an interval) are required"))
}

// AssertionSpec runs one check on every cluster of the run whose role the
// engine knows, writes its Markdown and HTML through the artifacts Writer and
// fails with the whole report when any row fails.
func AssertionSpec(_ context.Context, it string, inputGetter func() AssertionSpecInput) {
	DeclareStage(it, inputGetter, func(input AssertionSpecInput) StageFuncs {
		env := input.Env
		return StageFuncs{Run: func(ctx context.Context) error {
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
				targets = append(targets, assert.Target{Role: c.Role, Name: c.Name, Namespace: c.Namespace, Cluster: k})
			}
			w, err := env.ArtifactWriter(env.ArtifactFolder)
			if err != nil {
				return err
			}
			out, err := assert.Run(ctx, check, targets, w, assert.Options{Timeout: input.Wait.Timeout, Interval: input.Wait.Poll, Grace: input.Wait.Grace,
				Redactor: env.Redactor, Progress: env.Out})
			if err != nil {
				return err
			}
			if input.PostCheck != nil {
				input.PostCheck(ctx, out)
			}
			AddReportEntry(input.Stage, out.Markdown)
			return out.Err()
		}}
	})
}
