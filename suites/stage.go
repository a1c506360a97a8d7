package suites

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tkg-e2e/harness/framework/clusters"
	"github.com/tkg-e2e/harness/framework/run"
)

// StageFuncs are what RunStage runs.
type StageFuncs struct {
	// Run does the stage's work.
	Run func(ctx context.Context) error
	// Reattach checks that what the stage built in a kept run is still healthy
	// and makes it available to later stages (Env.SetCluster). It is used
	// with RESUME=1 when the state file says the stage passed. Nil means the
	// stage cannot be reused and runs again.
	Reattach func(ctx context.Context) error
}

// RunStage runs one stage inside a spec: it checks that the stages it needs
// (from the registry) passed, re-attaches instead of rebuilding when
// resuming, records status and duration in the state file and as a report
// entry, and fails the spec with the stage's error.
func RunStage(ctx context.Context, env *Env, name string, f StageFuncs) {
	if err := env.Validate(); err != nil {
		failf(env.Run, "%v", err)
	}
	if _, ok := env.Registry.Get(name); !ok {
		failf(env.Run, "stage %q is not in the registry: add its Stage to suites/registry.go", name)
	}
	for _, dep := range env.Registry.Needs(name) {
		if !env.External && !env.State.Passed(dep) {
			msg := fmt.Sprintf("stage %s needs %s, which did not pass in this run", name, dep)
			if rec, ok := env.State.Stage(dep); ok && rec.Status == run.StatusStopped {
				msg = fmt.Sprintf("stage %s needs %s, which stopped at the rehearsal limit", name, dep)
			}
			_ = env.State.EndStage(name, run.StatusSkipped, msg)
			Skip(msg)
		}
	}
	if env.Resume && env.State.Passed(name) && f.Reattach != nil {
		env.Printf("[%s] resuming: stage passed in the kept run, checking it is still healthy", name)
		// The reused stage's duration is the re-attach, not the kept run's build.
		if err := env.State.ReuseStage(name); err != nil {
			failf(env.Run, "cannot write the state file: %v", err)
		}
		start := time.Now()
		if err := f.Reattach(ctx); err != nil {
			msg := env.Redactor.String(fmt.Sprintf("stage %s passed in the kept run but cannot be reused: %v\n"+
				"Fix: run without RESUME=1 (after `make clean-run ARTIFACTS=%s`), or repair the cluster", name, err, env.ArtifactFolder))
			_ = env.State.EndStage(name, run.StatusFailed, msg)
			failf(env.Run, "%s", msg)
		}
		kept, _ := env.State.Stage(name)
		_ = env.State.EndStage(name, run.StatusReused, fmt.Sprintf("re-attached to the kept run (built there in %.1fs)", kept.KeptSeconds))
		AddReportEntry("stage", run.StageTiming{Stage: name, Status: run.StatusReused, Started: start, Seconds: time.Since(start).Seconds()})
		env.Printf("[%s] reused (%.1fs)", name, time.Since(start).Seconds())
		return
	}
	if lost := env.LeaseLost(); lost != nil {
		_ = env.State.EndStage(name, run.StatusFailed, lost.Error())
		failf(env.Run, "stage %s not started: %v", name, lost)
	}
	if err := env.State.StartStage(name); err != nil {
		failf(env.Run, "cannot write the state file: %v", err)
	}
	start := time.Now()
	env.Printf("[%s] started", name)
	ctx, cancel := env.stageContext(ctx)
	defer cancel()
	err := f.Run(ctx)
	var stopped *clusters.StoppedError
	if errors.As(err, &stopped) {
		msg := env.Redactor.String(err.Error())
		_ = env.State.EndStage(name, run.StatusStopped, msg)
		secs := time.Since(start).Seconds()
		AddReportEntry("stage", run.StageTiming{Stage: name, Status: run.StatusStopped, Started: start, Seconds: secs})
		env.Printf("[%s] stopped in %.1fs: %s", name, secs, msg)
		Skip(fmt.Sprintf("stage %s %s", name, msg))
	}
	status := run.StatusPassed
	msg := ""
	if err != nil {
		status = run.StatusFailed
		msg = failureMessage(env.Run, ctx, err)
	}
	t := env.tail(name)
	if t != nil && err != nil {
		// A Run that started its tail and then failed: the stage failed.
		t.stop(env, "stage "+name+" failed")
	}
	secs := time.Since(start).Seconds()
	if t != nil && err == nil {
		_ = env.State.EndStagePending(name, t.what)
		env.Printf("[%s] its own steps passed in %.1fs; %s goes on beside the stages after it", name, secs, t.what)
		t.release()
		return
	}
	_ = env.State.EndStage(name, status, msg)
	AddReportEntry("stage", run.StageTiming{Stage: name, Status: status, Started: start, Seconds: secs})
	env.Printf("[%s] %s in %.1fs", name, status, secs)
	if err != nil {
		failf(env.Run, "stage %s failed after %.0fs: %s", name, secs, indent(msg))
	}
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n  ") }

// StepEntries adds one hidden report entry per timed step of a stage and
// prints them, so JUnit and SUMMARY.md show where a stage spent its time.
func StepEntries(env *Env, stage string, steps []Step) {
	stepEntries(context.Background(), env, stage, steps)
}

// inputErrors joins the Env's own check with the problems a spec input
// found (empty strings are no problem), for the inputs' validate methods.
func InputErrors(env *Env, problems ...string) error {
	errs := []error{env.Validate()}
	for _, p := range problems {
		if p != "" {
			errs = append(errs, errors.New(p))
		}
	}
	return errors.Join(errs...)
}

// unless returns msg when ok is false.
func Unless(ok bool, msg string) string {
	if ok {
		return ""
	}
	return msg
}

// stageInput is what declareStage needs of a spec's input: its own check,
// and the Env and stage name RunStage records under.
// StageInput is what every stage spec's input has: a check of itself with
// a clear message, and the Env and stage it runs in.
type StageInput interface {
	Validate() error
	StageOf() (*Env, string)
}

// DeclareStage declares the nodes every stage spec has: a BeforeEach that
// reads the input through the getter when the spec runs and validates it
// with a clear message, and an It that runs the stage's funcs with RunStage.
// It returns a getter for the input, for specs that add nodes of their own.
func DeclareStage[T StageInput](it string, inputGetter func() T, funcs func(input T) StageFuncs) func() T {
	var input T
	BeforeEach(func() {
		input = inputGetter()
		Expect(input.Validate()).To(Succeed(), "invalid %T", input)
	})
	It(it, func(ctx SpecContext) {
		env, name := input.StageOf()
		RunStage(ctx, env, name, funcs(input))
	})
	return func() T { return input }
}

// LeftOutReadOnly declares the spec of a stage that READ_ONLY=1 leaves out:
// it records the stage as skipped with why (state.json, SUMMARY.md, JUnit),
// so the report says which checks did not run rather than passing them.
func LeftOutReadOnly(stage, why string, env func() *Env) {
	It("left out: read-only", func() {
		msg := fmt.Sprintf("left out: READ_ONLY=1 and %s", why)
		e := env()
		if e != nil && e.State != nil {
			_ = e.State.EndStage(stage, run.StatusSkipped, msg)
		}
		Skip(msg)
	})
}
