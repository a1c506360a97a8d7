package boskos_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tkg-e2e/harness/framework/boskos"
	"github.com/tkg-e2e/harness/framework/wait"
)

// The tests below run against a real Boskos server: scripts/test-leases.sh
// starts one with a resource of type clientTestType (one resource) and sets
// BOSKOS_URL. Without it they are skipped, and that script fails if they
// did not run.
const clientTestType = "tkg-e2e-client-test"

func realServer(t *testing.T) *boskos.Client {
	u := os.Getenv("BOSKOS_URL")
	if u == "" {
		t.Skip("BOSKOS_URL is not set: scripts/test-leases.sh runs this against a real Boskos")
	}
	return &boskos.Client{URL: u}
}

func TestRealLeaseLifecycle(t *testing.T) {
	c := realServer(t)
	ctx := context.Background()

	// A takes the only resource; B queues and times out, told who holds it.
	r, err := boskos.AcquireWait(ctx, c, boskos.AcquireOptions{Type: clientTestType, Owner: "owner-a", Timeout: 10 * time.Second, Poll: 200 * time.Millisecond})
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	if r.State != boskos.Busy || r.Owner != "owner-a" {
		t.Fatalf("acquired %+v, want busy for owner-a", r)
	}
	_, err = boskos.AcquireWait(ctx, c, boskos.AcquireOptions{Type: clientTestType, Owner: "owner-b", Timeout: 2 * time.Second, Poll: 200 * time.Millisecond})
	var te *wait.TimeoutError
	if !errors.As(err, &te) || !strings.Contains(te.LastState, "0 of 1 free") || !strings.Contains(te.LastState, "owner-a") {
		t.Fatalf("second acquire: want a timeout naming the busy pool and its owner, got %v", err)
	}

	// User data merges, and the wrong owner is refused as lost.
	if err := c.Update(ctx, r.Name, "owner-a", boskos.Busy, map[string]string{"K": "v"}); err != nil {
		t.Fatalf("update: %v", err)
	}
	if err := c.Update(ctx, r.Name, "owner-b", boskos.Busy, nil); !boskos.IsLost(err) {
		t.Fatalf("update by another owner: want lost, got %v", err)
	}

	// A reaper's reset takes it back: the heartbeat reports the loss.
	lost := make(chan *boskos.LostError, 1)
	stop := boskos.Heartbeat(ctx, c, boskos.HeartbeatOptions{Name: r.Name, Owner: "owner-a", Period: 200 * time.Millisecond,
		OnLost: func(e *boskos.LostError) { lost <- e }})
	defer stop()
	resetAll(t, c.URL, boskos.Busy, boskos.Dirty)
	select {
	case e := <-lost:
		if !strings.HasPrefix(e.Error(), "lease lost: "+r.Name) {
			t.Fatalf("lost error %q", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the heartbeat did not notice the reset within 5s")
	}
	if err := c.Release(ctx, r.Name, "owner-a", boskos.Free); !boskos.IsLost(err) {
		t.Fatalf("release after the reset: want lost, got %v", err)
	}

	// Back to free for the next run, user data kept across release.
	r2, err := c.Acquire(ctx, clientTestType, boskos.Dirty, boskos.Busy, "janitor", "")
	if err != nil {
		t.Fatalf("janitor acquire of the dirty resource: %v", err)
	}
	if r2.UserData["K"] != "v" {
		t.Fatalf("user data after reset: %v, want K=v kept", r2.UserData)
	}
	// Boskos reads its informer cache: right after the acquire it may still
	// see the old owner for a moment (measured here: the first update
	// after an acquire was refused once), so the janitor retries briefly.
	if err := wait.For(ctx, wait.Options{What: "the janitor's update", Timeout: 5 * time.Second, Interval: 100 * time.Millisecond},
		func(ctx context.Context) (bool, string, error) {
			err := c.Update(ctx, r2.Name, "janitor", boskos.Busy, map[string]string{"K": ""})
			return err == nil, "", err
		}); err != nil {
		t.Fatal(err)
	}
	if err := c.Release(ctx, r2.Name, "janitor", boskos.Free); err != nil {
		t.Fatalf("janitor release: %v", err)
	}
	// The metric reads the same informer cache (measured: right after the
	// release it still showed the janitor's busy lease once in CI).
	if err := wait.For(ctx, wait.Options{What: "the metric to show the released resource free", Timeout: 5 * time.Second, Interval: 100 * time.Millisecond},
		func(ctx context.Context) (bool, string, error) {
			m, err := c.Metric(ctx, clientTestType)
			return err == nil && m.Current[boskos.Free] == 1, fmt.Sprintf("%+v", m), err
		}); err != nil {
		t.Fatal(err)
	}
}

func TestRealUnknownTypeFailsAtOnce(t *testing.T) {
	c := realServer(t)
	start := time.Now()
	_, err := boskos.AcquireWait(context.Background(), c, boskos.AcquireOptions{Type: "no-such-type", Owner: "x", Timeout: time.Minute, Poll: time.Second})
	if err == nil || !strings.Contains(err.Error(), `no resource of type "no-such-type"`) || time.Since(start) > 5*time.Second {
		t.Fatalf("want an immediate no-such-type error, got %v after %s", err, time.Since(start))
	}
}

// resetAll is what a Boskos reaper does to resources whose heartbeats stopped.
func resetAll(t *testing.T, base, from, to string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/reset?type="+clientTestType+"&state="+from+"&expire=1ns&dest="+to, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("reset: %v %v", err, resp)
	}
	resp.Body.Close()
}
