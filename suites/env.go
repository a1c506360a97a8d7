// Package suites holds the harness's stages as reusable Ginkgo specs, in
// Cluster API's style: XxxSpec(ctx, inputGetter) declares the spec, the
// input (explicit fields, hooks as func fields) is read through the getter
// when the spec runs and validated with a clear message.
//
// A stage is one file here: its Stage value (a stages.Definition plus the
// binding that builds the spec's input from the Env, and the cleanup of the
// resources it records) and its spec. The registry (registry.go) lists the
// stages in run order; the e2e entry points, `harness plan`, interval
// validation, failure classification and cleanup all read it.
package suites

import (
	"fmt"
	"sync"

	"github.com/tkg-e2e/harness/framework/artifacts/report"
	"github.com/tkg-e2e/harness/framework/kube"
)

// Env is what every stage spec shares, in three parts: the run's context
// (Run: config, state, artifacts, output, lease), its clusters (ClusterSet)
// and what the stages leave for each other (reports, the checks left
// running, the API watches of a move). Build it with NewEnv.
type Env struct {
	*Run
	ClusterSet

	mu      sync.Mutex
	reports Reports
	// collectedAtFailure: stages whose failure was already collected.
	collectedAtFailure map[string]bool
	// watches poll the API servers the move hands over between (watch.go).
	watches map[string]*kube.ReadyWatch
	// tails are the checks stages left running beside later stages (tail.go).
	tails map[string]*tail
	// teardown is the throw-away kind cluster of the move-backs (selfhosted.go).
	teardown *teardownCluster
}

// Reports are what the stages and the collectors leave for the run's reports.
type Reports struct {
	// PlacementHTML is the path of the placement matrix page, linked from index.html.
	PlacementHTML string
	// Conformance is the conformance stage's result for SUMMARY.md and index.html.
	Conformance *report.ConformanceResult
	// DayTwo are the day-two stages' timelines.
	DayTwo []report.DayTwoResult
	// Findings of the final artifacts collection.
	Findings *Findings
}

// UpdateReports changes the reports under the Env's lock.
func (e *Env) UpdateReports(f func(*Reports)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	f(&e.reports)
}

// Reports returns a copy of what the stages left for the reports.
func (e *Env) Reports() Reports {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.reports
}

// firstFailure reports whether this is the first failure of stage, so
// collection at failure runs once per stage.
func (e *Env) firstFailure(stage string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.collectedAtFailure == nil {
		e.collectedAtFailure = map[string]bool{}
	}
	if e.collectedAtFailure[stage] {
		return false
	}
	e.collectedAtFailure[stage] = true
	return true
}

// Validate checks what every stage needs.
func (e *Env) Validate() error {
	if e == nil {
		return fmt.Errorf("suite Env is nil: the BeforeSuite that builds it did not run or failed")
	}
	return e.Run.Validate()
}
