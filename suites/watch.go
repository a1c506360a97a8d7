package suites

import (
	"context"
	"time"

	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/move"
)

// The move's settle-before needs both API servers answering every poll for
// its interval right before the move. The bootstrap and management
// clusters are polled from the moment the run has them, at that interval's
// poll, so the window is usually full by the time the move starts instead
// of being waited out then (move.PreCheckInput.SourceWatch).

// watchForMove starts the /readyz watch of a cluster the move hands over
// between, when the run has a move stage with a settle-before period.
func watchForMove(env *Env, c *Cluster) {
	if !env.Registry.Registered("move", "settle-before") {
		return
	}
	if iv := env.Interval("move", "settle-before"); iv.Timeout > 0 {
		_, _ = env.readyWatch(c, iv.Poll)
	}
}

// moveWatches gives a move the ready watches of its source and target for
// its settle-before window (both API servers must have answered every poll
// of it: one slow answer is no reason to fail, a flapping one is). They
// were started when the clusters were made (watchForMove); a run that
// re-attached starts them now. It returns what stops them.
func (e *Env) moveWatches(in *move.Input, from, to *Cluster) (stop func()) {
	if in.Timeouts.SettleBefore.Timeout <= 0 {
		return func() {}
	}
	sw, serr := e.readyWatch(from, in.Timeouts.SettleBefore.Poll)
	tw, terr := e.readyWatch(to, in.Timeouts.SettleBefore.Poll)
	if serr == nil && terr == nil {
		in.SourceWatch, in.TargetWatch = sw, tw
	}
	return func() {
		e.stopWatch(to.Name)
		e.stopWatch(from.Name)
	}
}

// readyWatch returns the cluster's watch, started now at every if it has
// none yet.
func (e *Env) readyWatch(c *Cluster, every time.Duration) (*kube.ReadyWatch, error) {
	e.mu.Lock()
	w := e.watches[c.Name]
	e.mu.Unlock()
	if w != nil {
		return w, nil
	}
	k, err := c.Connect()
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if w := e.watches[c.Name]; w != nil {
		return w, nil
	}
	if e.watches == nil {
		e.watches = map[string]*kube.ReadyWatch{}
	}
	w = kube.WatchReady(context.Background(), k, every)
	e.watches[c.Name] = w
	return w, nil
}

// stopWatch ends a cluster's watch, if any (it is being deleted, or the
// move no longer needs it).
func (e *Env) stopWatch(name string) {
	e.mu.Lock()
	w := e.watches[name]
	delete(e.watches, name)
	e.mu.Unlock()
	if w != nil {
		w.Stop()
	}
}

// stopWatches ends every watch (suite teardown).
func (e *Env) stopWatches() {
	e.mu.Lock()
	var names []string
	for n := range e.watches {
		names = append(names, n)
	}
	e.mu.Unlock()
	for _, n := range names {
		e.stopWatch(n)
	}
}
