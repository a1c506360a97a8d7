package kube

import (
	"context"
	"sync"
	"time"
)

// ReadyWatch asks a cluster's API server /readyz every interval, in the
// background, and remembers since when every answer was good. A check that
// needs "the API server answered throughout the last N seconds" (the move's
// settle-before) can then be satisfied by the polls made while earlier work
// ran, instead of waiting N seconds of its own: the same polls, the same
// window, observed from earlier on.
type ReadyWatch struct {
	c      *Cluster
	every  time.Duration
	cancel context.CancelFunc
	done   chan struct{}

	mu sync.Mutex
	// since is the first of the current run of good answers (zero when the
	// last answer was bad or none came yet); good counts them.
	since   time.Time
	good    int
	polls   int
	last    time.Time
	lastErr error
	lastBad time.Time
}

// WatchReady starts polling c every interval until ctx ends or Stop.
func WatchReady(ctx context.Context, c *Cluster, every time.Duration) *ReadyWatch {
	ctx, cancel := context.WithCancel(ctx)
	w := &ReadyWatch{c: c, every: every, cancel: cancel, done: make(chan struct{})}
	go w.run(ctx)
	return w
}

func (w *ReadyWatch) run(ctx context.Context) {
	defer close(w.done)
	t := time.NewTicker(w.every)
	defer t.Stop()
	for {
		w.poll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (w *ReadyWatch) poll(ctx context.Context) {
	at := time.Now()
	err := w.c.Ready(ctx)
	if ctx.Err() != nil {
		return // stopping: not an answer of the server's
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.polls++
	w.last = at
	if err != nil {
		w.since, w.good, w.lastErr, w.lastBad = time.Time{}, 0, err, at
		return
	}
	if w.since.IsZero() {
		w.since = at
	}
	w.good++
}

// ReadyState is what a ReadyWatch has seen.
type ReadyState struct {
	// Since is when the current run of good answers began; zero when the
	// last answer was bad or none came yet.
	Since time.Time
	// Good is the number of answers in that run; Polls all answers.
	Good, Polls int
	// Last is when the last answer (good or bad) was asked for: a watch
	// that stopped polling proves nothing about the time since.
	Last time.Time
	// LastErr and LastBad are the last bad answer and when it was asked.
	LastErr error
	LastBad time.Time
	// Every is the watch's interval.
	Every time.Duration
}

// State returns what the watch has seen so far.
func (w *ReadyWatch) State() ReadyState {
	w.mu.Lock()
	defer w.mu.Unlock()
	return ReadyState{Since: w.since, Good: w.good, Polls: w.polls, Last: w.last, LastErr: w.lastErr, LastBad: w.lastBad, Every: w.every}
}

// Kubeconfig is the watched cluster's kubeconfig, for messages.
func (w *ReadyWatch) Kubeconfig() string { return w.c.Kubeconfig }

// Stop ends the polling and waits for it.
func (w *ReadyWatch) Stop() {
	w.cancel()
	<-w.done
}
