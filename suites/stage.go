package suites

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/framework/stages"
)

// StageFuncs are a stage's hooks.
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
// passed, re-attaches instead of rebuilding when resuming, records status and
// duration in the state file and as a report entry, and fails the spec with
// the stage's error.
func RunStage(ctx context.Context, env *Env, name string, f StageFuncs) {
	if err := env.Validate(); err != nil {
		Fail(err.Error())
	}
	for _, dep := range stages.Needs(name) {
		if !env.External && !env.State.Passed(dep) {
			msg := fmt.Sprintf("stage %s needs %s, which did not pass in this run", name, dep)
			_ = env.State.EndStage(name, run.StatusSkipped, msg)
			Skip(msg)
		}
	}
	if env.Resume && env.State.Passed(name) && f.Reattach != nil {
		start := time.Now()
		env.Printf("[%s] resuming: stage passed in the kept run, checking it is still healthy", name)
		if err := f.Reattach(ctx); err != nil {
			msg := fmt.Sprintf("stage %s passed in the kept run but cannot be reused: %v\n"+
				"Fix: run without RESUME=1 (after `make clean-run ARTIFACTS=%s`), or repair the cluster", name, err, env.ArtifactFolder)
			_ = env.State.EndStage(name, run.StatusFailed, msg)
			Fail(msg)
		}
		_ = env.State.EndStage(name, run.StatusReused, "re-attached to the kept run")
		AddReportEntry("stage", StageEntry{Stage: name, Status: run.StatusReused, Seconds: time.Since(start).Seconds()})
		env.Printf("[%s] reused (%.1fs)", name, time.Since(start).Seconds())
		return
	}
	if err := env.State.StartStage(name); err != nil {
		Fail(fmt.Sprintf("cannot write the state file: %v", err))
	}
	start := time.Now()
	env.Printf("[%s] started", name)
	err := f.Run(ctx)
	status := run.StatusPassed
	msg := ""
	if err != nil {
		status = run.StatusFailed
		msg = err.Error()
		if errors.Is(ctx.Err(), context.Canceled) {
			msg = "interrupted: " + msg
		}
	}
	_ = env.State.EndStage(name, status, msg)
	secs := time.Since(start).Seconds()
	AddReportEntry("stage", StageEntry{Stage: name, Status: status, Seconds: secs})
	env.Printf("[%s] %s in %.1fs", name, status, secs)
	if err != nil {
		Fail(fmt.Sprintf("stage %s failed after %.0fs: %s", name, secs, env.Redactor.String(indent(err.Error()))))
	}
}

// StageEntry is the report entry each stage adds; the JUnit report carries it
// and the artifacts summary reads it.
type StageEntry struct {
	Stage   string  `json:"stage"`
	Status  string  `json:"status"`
	Seconds float64 `json:"seconds"`
}

func (s StageEntry) String() string {
	return fmt.Sprintf("%s %s in %.1fs", s.Stage, s.Status, s.Seconds)
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n  ") }
