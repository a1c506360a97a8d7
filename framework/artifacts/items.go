package artifacts

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Item is one unit of collection: one container's log, one node's journal,
// one kind's dump. Items are small so that one that hangs costs one timeout
// and one line in errors.txt, not the whole collection.
type Item struct {
	// Name says what the item collects, as errors.txt shows it.
	Name string
	Run  func(ctx context.Context) error
}

// Runner runs items in parallel, each bounded by a timeout. Several
// goroutines may call Run on the same Runner; they share its parallelism.
type Runner struct {
	w       *Writer
	prefix  string
	timeout time.Duration
	sem     chan struct{}
}

// NewRunner returns a Runner whose items are recorded under prefix
// ("cluster management/mgmt"). timeout bounds each item (config
// artifacts.itemTimeout); parallel is how many run at once.
func (w *Writer) NewRunner(prefix string, parallel int, timeout time.Duration) (*Runner, error) {
	if timeout <= 0 {
		return nil, fmt.Errorf("artifacts: item timeout is %s; set artifacts.itemTimeout in the profile (e.g. 20s)", timeout)
	}
	if parallel <= 0 {
		return nil, fmt.Errorf("artifacts: parallel is %d; it must be at least 1", parallel)
	}
	return &Runner{w: w, prefix: prefix, timeout: timeout, sem: make(chan struct{}, parallel)}, nil
}

// Run runs items and returns when each has finished or timed out. Failures
// are recorded in the Writer; the returned slice holds each item's error (nil
// on success) in the order given, for callers that depend on an item.
//
// An item that ignores its context is abandoned at the timeout: Run stops
// waiting for it and frees its slot, so a docker exec into a frozen node or a
// read from a dead API server cannot stall the collection.
func (r *Runner) Run(ctx context.Context, items ...Item) []error {
	errs := make([]error, len(items))
	var wg sync.WaitGroup
	for i, it := range items {
		select {
		case r.sem <- struct{}{}:
		case <-ctx.Done():
			errs[i] = ctx.Err()
			r.record(it.Name, OutcomeFailed, fmt.Errorf("not started: %w", context.Cause(ctx)), 0)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-r.sem }()
			errs[i] = r.runOne(ctx, it)
		}()
	}
	wg.Wait()
	return errs
}

func (r *Runner) runOne(ctx context.Context, it Item) error {
	start := time.Now()
	ictx, cancel := context.WithTimeoutCause(ctx, r.timeout, errItemTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Errorf("panic: %v", p)
			}
		}()
		done <- it.Run(ictx)
	}()
	var err error
	defer func() {
		name := it.Name
		if r.prefix != "" {
			name = r.prefix + ": " + name
		}
		r.w.timed(ItemTiming{Item: name, Seconds: time.Since(start).Round(time.Millisecond).Seconds()})
	}()
	select {
	case err = <-done:
	case <-ictx.Done():
		// Give a well-behaved item a moment to return its own, more precise error.
		select {
		case err = <-done:
		case <-time.After(time.Second):
			err = fmt.Errorf("abandoned: %w", context.Cause(ictx))
		}
	}
	if err == nil {
		return nil
	}
	var gone *GoneError
	if errors.As(err, &gone) {
		r.record(it.Name, OutcomeSkipped, err, time.Since(start).Seconds())
		return nil
	}
	outcome := OutcomeFailed
	if errors.Is(context.Cause(ictx), errItemTimeout) && ictx.Err() != nil {
		outcome = OutcomeTimedOut
		err = fmt.Errorf("no result within the item timeout of %s: %w", r.timeout, err)
	}
	r.record(it.Name, outcome, err, time.Since(start).Seconds())
	return err
}

var errItemTimeout = errors.New("artifacts item timeout")

// GoneError is what an item returns when what it was to collect went away
// between the listing that named it and the item (a pod deleted, a crash
// looping container whose previous run was replaced): collection happens
// while a failed run's objects still change, and nothing that was there
// to read is lost, so the item is recorded as not collected, with why,
// rather than as a failure of the collection.
type GoneError struct{ Why string }

func (e *GoneError) Error() string { return "gone since it was listed: " + e.Why }

func (r *Runner) record(name, outcome string, err error, seconds float64) {
	if r.prefix != "" {
		name = r.prefix + ": " + name
	}
	r.w.record(ItemRecord{Item: name, Outcome: outcome, Message: fmt.Sprint(err), Seconds: seconds})
}

// Skip records an item of this runner that was not collected, and why.
func (r *Runner) Skip(name, reason string) {
	if r.prefix != "" {
		name = r.prefix + ": " + name
	}
	r.w.Skip(name, reason)
}

// Fail records a failure of this runner's scope that is not an item of its own.
func (r *Runner) Fail(name string, err error) {
	r.record(name, OutcomeFailed, err, 0)
}
