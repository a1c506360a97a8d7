package boskos

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// LostError says a held resource is no longer the holder's: Boskos answered
// a heartbeat with another owner or state (a reaper reset it after missed
// heartbeats, or a person released it).
type LostError struct {
	Name string
	Err  error
}

func (e *LostError) Error() string {
	return fmt.Sprintf("lease lost: %s is no longer this run's (%v)", e.Name, e.Err)
}
func (e *LostError) Unwrap() error { return e.Err }

// confirmLost is how long a refused heartbeat waits before the retry that
// confirms the loss.
const confirmLost = time.Second

// HeartbeatOptions say what to keep alive and whom to tell.
type HeartbeatOptions struct {
	Name, Owner string
	// Period between updates; Boskos reapers reset resources not updated
	// for their expiry (15 minutes in Kubernetes' CI), so a period of a
	// minute or less leaves room for missed beats.
	Period time.Duration
	// OnLost is called once, from the heartbeat's goroutine, when the
	// resource is no longer the owner's; the heartbeat then stops.
	OnLost func(*LostError)
	// OnError gets transient failures (server briefly unreachable).
	OnError func(error)
}

// Heartbeat updates a busy resource every period until stop is called or
// the lease is lost. stop waits for the goroutine to end.
func Heartbeat(ctx context.Context, c *Client, o HeartbeatOptions) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(o.Period)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			err := c.Update(ctx, o.Name, o.Owner, Busy, nil)
			if IsLost(err) {
				// Boskos answers from its informer cache, which can lag a
				// write by a moment: only a refusal that holds is a loss.
				select {
				case <-ctx.Done():
					return
				case <-time.After(confirmLost):
				}
				err = c.Update(ctx, o.Name, o.Owner, Busy, nil)
			}
			switch {
			case err == nil || ctx.Err() != nil:
			case IsLost(err):
				if o.OnLost != nil {
					o.OnLost(&LostError{Name: o.Name, Err: err})
				}
				return
			case o.OnError != nil:
				o.OnError(err)
			}
		}
	}()
	return func() { cancel(); wg.Wait() }
}
