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
}

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

	var lastState string
	var lastErr error
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
		switch {
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
