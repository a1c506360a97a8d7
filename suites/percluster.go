package suites

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/tkg-e2e/harness/framework/run"
)

// clusterJob is one cluster's part of a stage that acts on several.
type clusterJob struct {
	// ID and Name name the cluster (workload-2, tkg-e2e-wl2-k3f9a).
	ID, Name string
	Run      func(ctx context.Context) ([]Step, error)
}

// eachCluster runs every cluster's job of a stage at once (a run's
// workload clusters are made, and smoke-tested, side by side). Each
// cluster's steps are timed under "<id>/<step>", its result is recorded in
// the stage's record (state.json's clusters) and as a report entry (JUnit,
// SUMMARY.md), and the failures come back joined, each naming its cluster;
// one cluster's failure does not stop the others. A single job is the
// stage's own work: run where the stage runs, its steps timed as the
// stage's, its error as it is.
func eachCluster(ctx context.Context, env *Env, stage string, jobs []clusterJob) error {
	if len(jobs) == 1 {
		steps, err := jobs[0].Run(ctx)
		StepEntries(env, stage, steps)
		return err
	}
	results := runJobs(ctx, jobs)
	var errs []error
	for i, c := range jobs {
		r := results[i]
		steps := make([]Step, len(r.steps))
		for j, s := range r.steps {
			steps[j] = Step{Name: c.ID + "/" + s.Name, Duration: s.Duration}
		}
		StepEntries(env, stage, steps)
		res := run.ClusterResult{ID: c.ID, Name: c.Name, Status: run.StatusPassed, Seconds: r.took.Seconds()}
		if r.err != nil {
			res.Status, res.Message = run.StatusFailed, env.Redactor.String(r.err.Error())
			errs = append(errs, fmt.Errorf("%s cluster %s: %w", c.ID, c.Name, r.err))
		}
		if err := env.State.SetStageCluster(stage, res); err != nil {
			errs = append(errs, err)
		}
		AddReportEntry(stage+" "+c.ID, fmt.Sprintf("%s cluster %s %s in %.0fs", c.ID, c.Name, res.Status, res.Seconds))
		env.Printf("[%s] %s cluster %s %s in %.1fs", stage, c.ID, c.Name, res.Status, res.Seconds)
	}
	return errors.Join(errs...)
}

// jobResult is what one cluster's job gave.
type jobResult struct {
	steps []Step
	err   error
	took  time.Duration
}

// runJobs runs the jobs at once and waits for all of them; a job that
// panics has failed, and the others go on.
func runJobs(ctx context.Context, jobs []clusterJob) []jobResult {
	results := make([]jobResult, len(jobs))
	var wg sync.WaitGroup
	for i, c := range jobs {
		wg.Go(func() {
			start := time.Now()
			defer func() {
				if p := recover(); p != nil {
					results[i].err = fmt.Errorf("panic: %v", p)
				}
				results[i].took = time.Since(start)
			}()
			results[i].steps, results[i].err = c.Run(ctx)
		})
	}
	wg.Wait()
	return results
}

// EachWorkload runs f on every workload cluster of the run, side by side,
// from a stage's Run: a stage that applies to every workload cluster is
// this call in one file and one registry entry. With one workload cluster
// it is f on that cluster, its steps timed as the stage's own; with
// several, each cluster's steps and result are its own (eachCluster).
func EachWorkload(ctx context.Context, env *Env, stage string, f func(ctx context.Context, c *Cluster) ([]Step, error)) error {
	cs := env.Workloads()
	if len(cs) == 0 {
		return ErrNoCluster(RoleWorkload)
	}
	jobs := make([]clusterJob, len(cs))
	for i, c := range cs {
		jobs[i] = clusterJob{ID: c.Key(), Name: c.Name, Run: func(ctx context.Context) ([]Step, error) { return f(ctx, c) }}
	}
	return eachCluster(ctx, env, stage, jobs)
}
