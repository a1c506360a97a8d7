package suites

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/tkg-e2e/harness/framework/boskos"
	"github.com/tkg-e2e/harness/framework/run"
)

// A stage may leave its last, slowest check running beside the stages after
// it (its tail) when they do not depend on that check: the move's settle
// period watches the management cluster's Machines for a while, and the
// workload cluster can be created from the management cluster meanwhile.
// The tail is still the stage's: the stage's record in the state file stays
// open (passed, with what is pending) until the tail ends and then ends with
// the tail's verdict and time; the join spec, declared after the stage
// Stage.JoinAfter names and carrying the stage's labels, waits for it and
// fails as the stage, so JUnit, the summary and the at-failure collection
// name the stage whose check failed.

// TailResult is what a tail's work returns.
type TailResult struct {
	// Steps are the tail's timed steps, reported as the stage's.
	Steps []Step
	// Report runs in the join spec, with its context (Ginkgo report entries
	// and assertions belong in a spec), after the steps are reported.
	Report func(ctx context.Context)
}

type tail struct {
	stage, what string
	started     time.Time
	cancel      context.CancelCauseFunc
	// released is closed once RunStage recorded the stage's own steps, so the
	// tail's end is always the record's last word.
	released chan struct{}
	release  func()
	done     chan struct{}
	// held are the report entries the tail's code added (AddEntry): the
	// join spec adds them, so they are the stage's and no later spec's.
	held *heldEntries
	res  TailResult
	err  error
}

// StartTail runs f beside the stages after stage. Call it from the stage's
// Run, last, when everything before it passed. Its context is not the
// stage's (that ends when the stage's spec does): it ends when the lease is
// lost or the suite tears down (stopTails).
func (e *Env) StartTail(stage, what string, f func(ctx context.Context) (TailResult, error)) {
	base, stop := e.stageContext(context.Background())
	ctx, cancel := context.WithCancelCause(base)
	ctx, held := holdEntries(ctx)
	t := &tail{stage: stage, what: what, started: time.Now(), cancel: cancel, released: make(chan struct{}), done: make(chan struct{}), held: held}
	t.release = sync.OnceFunc(func() { close(t.released) })
	e.mu.Lock()
	if e.tails == nil {
		e.tails = map[string]*tail{}
	}
	e.tails[stage] = t
	e.mu.Unlock()
	go func() {
		defer close(t.done)
		defer stop()
		res, err := f(ctx)
		status, msg := run.StatusPassed, ""
		if err != nil {
			status, msg = run.StatusFailed, failureMessage(e.Run, ctx, err)
		}
		t.res, t.err = res, err
		<-t.released
		_ = e.State.EndStage(stage, status, msg)
		rec, _ := e.State.Stage(stage)
		e.Printf("[%s] %s ended (%s, %.1fs after it started): stage %s %s in %.1fs", stage, what, status,
			time.Since(t.started).Seconds(), stage, status, rec.Seconds)
	}()
}

func (e *Env) tail(stage string) *tail {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.tails[stage]
}

// stopTails ends every tail still running, with why as the cause, and waits
// for each to record its stage: the suite tears down (an interrupt, or the
// join specs were not selected) and cleanup must not delete clusters a
// check is still reading.
func (e *Env) stopTails(why string) {
	e.mu.Lock()
	var ts []*tail
	for _, t := range e.tails {
		ts = append(ts, t)
	}
	e.mu.Unlock()
	for _, t := range ts {
		t.stop(e, why)
	}
}

// stop ends the tail if it still runs and waits until it recorded its stage.
func (t *tail) stop(e *Env, why string) {
	select {
	case <-t.done:
		return
	default:
	}
	e.Printf("[%s] stopping %s: %s", t.stage, t.what, why)
	t.cancel(errors.New(why))
	t.release()
	<-t.done
}

// failureMessage is a failed stage's message for the state file and the
// report: redacted, and led by the cause the classifier reads when the
// stage's context ended under it ("lease lost: ", "interrupted: ").
func failureMessage(env *Run, ctx context.Context, err error) string {
	msg := env.Redactor.String(err.Error())
	var lost *boskos.LostError
	switch {
	case errors.As(context.Cause(ctx), &lost):
		msg = env.Redactor.String(lost.Error()) + "\n" + msg
	case errors.Is(ctx.Err(), context.Canceled) && !strings.HasPrefix(msg, "interrupted"):
		msg = "interrupted: " + msg
		if c := context.Cause(ctx); c != nil && !errors.Is(c, context.Canceled) {
			msg += " (" + env.Redactor.String(c.Error()) + ")"
		}
	}
	return msg
}

// JoinSpec declares the spec that waits for the tail stage left running and
// reports it as the stage's own: its steps, its report, its time, and its
// failure. Without a tail (the stage failed before it, was reused from a
// kept run, or its driver leaves none) the spec is skipped with the reason.
func JoinSpec(stage string, env func() *Env) {
	It("finishes the checks it left running beside the stages after it", func(ctx SpecContext) {
		e := env()
		t := e.tail(stage)
		if t == nil {
			why := "the stage did not run in this process"
			if rec, ok := e.State.Stage(stage); ok {
				why = fmt.Sprintf("the stage is %s", rec.Status)
				if rec.Message != "" {
					first, _, _ := strings.Cut(rec.Message, "\n")
					why += ": " + first
				}
			}
			Skip(fmt.Sprintf("stage %s left no check running (%s)", stage, why))
		}
		select {
		case <-t.done:
		default:
			e.Printf("[%s] waiting for %s (running for %s beside the stages after %s)", stage, t.what,
				time.Since(t.started).Round(time.Second), stage)
			select {
			case <-t.done:
			case <-ctx.Done():
				failf(e.Run, "interrupted while waiting for stage %s's %s", stage, t.what)
			}
		}
		t.held.add()
		StepEntries(e, stage, t.res.Steps)
		if t.res.Report != nil {
			t.res.Report(ctx)
		}
		rec, _ := e.State.Stage(stage)
		AddReportEntry("stage", run.StageTiming{Stage: stage, Status: rec.Status, Started: rec.Started, Seconds: rec.Seconds})
		if t.err != nil {
			failf(e.Run, "stage %s failed after %.0fs, in %s: %s", stage, rec.Seconds, t.what, indent(rec.Message))
		}
	})
}
