// Package probe measures availability from outside a cluster while it
// changes: a check polled at a fixed period, every run of failed polls an
// outage window (from the first failure to the next success), the total
// held to a bound. Cluster API's upgrade specs check that the cluster ends
// healthy; this says how long users could not reach it on the way.
package probe

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Probe is one availability check.
type Probe struct {
	// Name says what is probed ("API server /readyz").
	Name string
	// Check answers nil when what is probed is available. Each call gets a
	// context bounded by Timeout.
	Check func(ctx context.Context) error
	// Period between polls, and Timeout of one poll (default: Period): how
	// long an answer may take before the poll counts as out. A loaded
	// machine answers slowly without being down; the slowest answer is
	// reported either way (Result.Slowest).
	Period, Timeout time.Duration
}

// Window is one outage: from the first failed poll to the next one that
// passed (End is the probe's stop when none did).
type Window struct {
	Start, End time.Time
	// LastErr is the last failure seen in the window.
	LastErr string
}

// Duration of the window.
func (w Window) Duration() time.Duration { return w.End.Sub(w.Start) }

// Result is what a probe saw between Start and Stop.
type Result struct {
	Name            string
	Start, End      time.Time
	Polls, Failures int
	Windows         []Window
	// Slowest is the longest time a poll that passed took to answer.
	Slowest time.Duration
}

// Total is the summed length of the outage windows.
func (r Result) Total() time.Duration {
	var d time.Duration
	for _, w := range r.Windows {
		d += w.Duration()
	}
	return d
}

// Longest is the longest window (zero without one).
func (r Result) Longest() time.Duration {
	var d time.Duration
	for _, w := range r.Windows {
		d = max(d, w.Duration())
	}
	return d
}

// Summary is one line: "API server /readyz: 2.3s out in 2 windows over
// 312s (1248 polls, 9 failed, slowest answer 0.41s)".
func (r Result) Summary() string {
	return fmt.Sprintf("%s: %.1fs out in %d window(s) over %.0fs (%d polls, %d failed, slowest answer %.2fs)", r.Name, r.Total().Seconds(),
		len(r.Windows), r.End.Sub(r.Start).Seconds(), r.Polls, r.Failures, r.Slowest.Seconds())
}

// WindowList writes the windows relative to the probe's start:
// "+41.2s..+43.5s (2.3s): connection refused".
func (r Result) WindowList() []string {
	out := make([]string, 0, len(r.Windows))
	for _, w := range r.Windows {
		out = append(out, fmt.Sprintf("+%.1fs..+%.1fs (%.1fs): %s", w.Start.Sub(r.Start).Seconds(), w.End.Sub(r.Start).Seconds(),
			w.Duration().Seconds(), w.LastErr))
	}
	return out
}

// Within returns an error naming every window when the total outage is
// over bound (a zero bound: only reported, never an error).
func (r Result) Within(bound time.Duration) error {
	if bound <= 0 || r.Total() <= bound {
		return nil
	}
	return fmt.Errorf("%s was out %.1fs in total, over its bound of %s: %s", r.Name, r.Total().Seconds(), bound, strings.Join(r.WindowList(), "; "))
}

// Running is a probe that polls until Stop.
type Running struct {
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	res    Result
	open   *Window
}

// Start polls p until Stop (or ctx ends).
func Start(ctx context.Context, p Probe) *Running {
	if p.Timeout <= 0 {
		p.Timeout = p.Period
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &Running{cancel: cancel, done: make(chan struct{}), res: Result{Name: p.Name, Start: time.Now()}}
	go func() {
		defer close(r.done)
		t := time.NewTicker(p.Period)
		defer t.Stop()
		for {
			r.poll(ctx, p)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return r
}

func (r *Running) poll(ctx context.Context, p Probe) {
	at := time.Now()
	pctx, cancel := context.WithTimeout(ctx, p.Timeout)
	err := p.Check(pctx)
	cancel()
	if ctx.Err() != nil {
		return // stopped mid-poll: not an outage
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.res.Polls++
	if err == nil {
		r.res.Slowest = max(r.res.Slowest, time.Since(at))
		if r.open != nil {
			r.open.End = at
			r.res.Windows = append(r.res.Windows, *r.open)
			r.open = nil
		}
		return
	}
	r.res.Failures++
	if r.open == nil {
		r.open = &Window{Start: at}
	}
	r.open.LastErr = err.Error()
}

// Stop ends the probe and returns what it saw; a window still open ends now.
func (r *Running) Stop() Result {
	r.cancel()
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	r.res.End = time.Now()
	if r.open != nil {
		r.open.End = r.res.End
		r.res.Windows = append(r.res.Windows, *r.open)
		r.open = nil
	}
	return r.res
}

// Snapshot is the result so far, for progress lines.
func (r *Running) Snapshot() Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	res := r.res
	res.Windows = append([]Window(nil), r.res.Windows...)
	res.End = time.Now()
	if r.open != nil {
		w := *r.open
		w.End = res.End
		res.Windows = append(res.Windows, w)
	}
	return res
}
