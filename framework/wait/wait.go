// Package wait polls a condition until it holds or a deadline passes, reporting
// progress while it waits. It returns errors instead of failing a test, so the
// same helpers work inside Ginkgo specs, in scripts and in plain Go tests
// (the style of e2e-framework's klient/wait).
package wait

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// Condition reports whether the awaited state has been reached. state is a
// short human description of what was observed ("1/2 nodes Ready: m-0 NotReady"),
// kept as the last state seen for progress lines and for the timeout error.
// A non-nil err is treated as transient (remembered and retried) unless it is
// wrapped with Permanent.
type Condition func(ctx context.Context) (done bool, state string, err error)

// Options describe one wait. What and Timeout are required; they are what the
// progress lines and the timeout error talk about.
type Options struct {
	// What is waited for, e.g. "control plane of default/mgmt Available".
	What string
	// Timeout bounds the wait. It comes from config intervals, never from a literal in a spec.
	Timeout time.Duration
	// Interval between polls; defaults to Timeout/60 bounded to [250ms, 10s].
	Interval time.Duration
	// Progress receives a line every ProgressEvery while waiting, and one when done.
	// Nil means silent.
	Progress io.Writer
	// ProgressEvery defaults to 15s.
	ProgressEvery time.Duration
	// Prefix is written before every progress line, e.g. "[management]".
	Prefix string
	// Grace is how long a Stuck state must last before the wait ends with
	// it as the cause; 0 is DefaultGrace.
	Grace time.Duration
}

// DefaultGrace is the Grace of a wait that sets none: long enough for a
// controller to act on what it just saw (a ReplicaSet's retry, a kubelet's
// next pull), short against any wait's timeout.
const DefaultGrace = 30 * time.Second

// TimeoutError is returned when the deadline passes. It carries the last state
// and the last transient error, so the reader knows what was seen, not only that
// something did not happen.
type TimeoutError struct {
	What      string
	Elapsed   time.Duration
	LastState string
	LastErr   error
}

func (e *TimeoutError) Error() string {
	msg := fmt.Sprintf("timed out after %s waiting for %s", e.Elapsed.Round(time.Second), e.What)
	if e.LastState != "" {
		msg += "; last state: " + e.LastState
	}
	if e.LastErr != nil {
		msg += "; last error: " + e.LastErr.Error()
	}
	return msg
}

type permanentError struct{ err error }

func (p permanentError) Error() string { return p.err.Error() }
func (p permanentError) Unwrap() error { return p.err }

// Permanent marks an error that must stop the wait at once (bad input, object
// gone for good) instead of being retried until the deadline.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err: err}
}

// Stuck marks a state that will not fix itself in the time left (a create
// refused by admission, an image no registry serves, a pod no node can
// take). For keeps polling it for Options.Grace, since the cluster may still
// change, then gives up with cause as the error's first words. cause says
// what refused and the object, in the API's or controller's words.
func Stuck(cause string) error { return stuckError{cause: cause} }

type stuckError struct{ cause string }

func (s stuckError) Error() string { return s.cause }

// StuckError is returned when a Stuck state outlasted the grace: Cause
// first, then what the wait was for, so a one-line report starts with why.
type StuckError struct {
	Cause   string
	What    string
	Elapsed time.Duration
	// For is how long the state was stuck before the wait gave up.
	For time.Duration
	// TimedOut is set when the wait's timeout came before the grace ended.
	TimedOut  bool
	LastState string
}

func (e *StuckError) Error() string {
	how := fmt.Sprintf("unchanged for %s, the wait for %s gave up after %s", e.For.Round(time.Second), e.What, e.Elapsed.Round(time.Second))
	if e.TimedOut {
		how = fmt.Sprintf("so when the wait for %s timed out after %s", e.What, e.Elapsed.Round(time.Second))
	}
	msg := e.Cause + " (" + how + ")"
	if e.LastState != "" {
		msg += "; last state: " + e.LastState
	}
	return msg
}

// For polls cond until it reports done, returns a permanent error, the context
// ends, or opts.Timeout passes. The first poll happens immediately.
func For(ctx context.Context, opts Options, cond Condition) error {
	if opts.What == "" {
		return errors.New("wait.For: Options.What is required (say what is being waited for)")
	}
	if opts.Timeout <= 0 {
		return fmt.Errorf("wait.For(%s): Options.Timeout must be > 0 (set it from the config intervals)", opts.What)
	}
	interval := opts.Interval
	if interval <= 0 {
		interval = min(max(opts.Timeout/60, 250*time.Millisecond), 10*time.Second)
	}
	every := opts.ProgressEvery
	if every <= 0 {
		every = 15 * time.Second
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()

	grace := opts.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	var lastState string
	var lastErr error
	var stuckSince time.Time
	lastReport := start
	report := func(format string, args ...any) {
		if opts.Progress == nil {
			return
		}
		prefix := opts.Prefix
		if prefix != "" {
			prefix += " "
		}
		fmt.Fprintf(opts.Progress, "%s+%-5s %s\n", prefix, time.Since(start).Round(time.Second), fmt.Sprintf(format, args...))
	}
	for {
		done, state, err := cond(ctx)
		if state != "" {
			lastState = state
		}
		var perm permanentError
		var stuck stuckError
		if !errors.As(err, &stuck) {
			stuckSince = time.Time{}
		}
		switch {
		case errors.As(err, &stuck):
			lastErr = nil
			if stuckSince.IsZero() {
				stuckSince = time.Now()
			}
			if d := time.Since(stuckSince); d >= grace {
				serr := &StuckError{Cause: stuck.cause, What: opts.What, Elapsed: time.Since(start), For: d, LastState: lastState}
				report("gave up: %s", serr.Error())
				return serr
			}
		case errors.As(err, &perm):
			report("gave up waiting for %s: %v", opts.What, perm.err)
			return fmt.Errorf("waiting for %s: %w", opts.What, perm.err)
		case err != nil:
			lastErr = err
		case done:
			if time.Since(start) >= time.Second {
				report("done: %s", opts.What)
			}
			return nil
		default:
			lastErr = nil
		}
		if time.Since(lastReport) >= every {
			lastReport = time.Now()
			switch {
			case !stuckSince.IsZero():
				report("waiting for %s (last state: %s); it looks stuck, giving up in %s unless it changes: %s", opts.What, orUnknown(lastState),
					(grace - time.Since(stuckSince)).Round(time.Second), stuck.cause)
			case lastErr != nil:
				report("waiting for %s (last state: %s; last error: %v)", opts.What, orUnknown(lastState), lastErr)
			default:
				report("waiting for %s (last state: %s)", opts.What, orUnknown(lastState))
			}
		}
		select {
		case <-ctx.Done():
			terr := &TimeoutError{What: opts.What, Elapsed: time.Since(start), LastState: lastState, LastErr: lastErr}
			if parentErr := context.Cause(ctx); parentErr != nil && !errors.Is(parentErr, context.DeadlineExceeded) {
				return fmt.Errorf("interrupted (%v) while waiting for %s; last state: %s", parentErr, opts.What, orUnknown(lastState))
			}
			if !stuckSince.IsZero() {
				// The deadline came within the grace: the cause is known all the same.
				serr := &StuckError{Cause: stuck.cause, What: opts.What, Elapsed: time.Since(start), For: time.Since(stuckSince),
					TimedOut: true, LastState: lastState}
				report("gave up: %s", serr.Error())
				return serr
			}
			report("%s", terr.Error())
			return terr
		case <-time.After(interval):
		}
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "nothing observed yet"
	}
	return s
}
