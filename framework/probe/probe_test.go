package probe

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A real HTTP server that stops answering for a while: the probe sees one
// window about that long, and a bound below it fails naming the window.
func TestAnOutageOverItsBoundFails(t *testing.T) {
	var down atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if down.Load() {
			http.Error(w, "restarting", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	// A poll's timeout far above the server's answer: a loaded machine
	// (CI's, 2026-11-28) took more than the 20 ms period to answer.
	r := Start(context.Background(), Probe{Name: "probe Service", Period: 20 * time.Millisecond, Timeout: 2 * time.Second,
		Check: HTTPAny(srv.Client(), func() []string { return []string{srv.URL} })})
	time.Sleep(100 * time.Millisecond)
	down.Store(true)
	downAt := time.Now()
	time.Sleep(400 * time.Millisecond)
	down.Store(false)
	// The outage as the server had it: on a loaded machine (CI's, beside a
	// cluster being made, 2026-11-29) a 400 ms sleep lasted 605 ms.
	outage := time.Since(downAt)
	time.Sleep(100 * time.Millisecond)
	res := r.Stop()

	if len(res.Windows) != 1 {
		t.Fatalf("windows %v, want one", res.WindowList())
	}
	// The window opens at the first failed poll and closes at the first
	// good one: up to a period (and a late poll) after either edge.
	if got := res.Total(); got < outage-150*time.Millisecond || got > outage+350*time.Millisecond {
		t.Errorf("outage %s, want about %s (how long the server answered 503)", got, outage.Round(time.Millisecond))
	}
	err := res.Within(200 * time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "over its bound of 200ms") || !strings.Contains(err.Error(), "HTTP 503") {
		t.Errorf("Within(200ms) = %v, want the window and its last error", err)
	}
	if err := res.Within(res.Total()); err != nil {
		t.Errorf("Within(the outage itself) = %v, want nil: the bound is inclusive", err)
	}
	if err := res.Within(0); err != nil {
		t.Errorf("a zero bound only reports: %v", err)
	}
}

// A probe that never fails has no window; one still failing at Stop has a
// window that ends at Stop.
func TestWindowsOpenAndClosed(t *testing.T) {
	ok := Start(context.Background(), Probe{Name: "ok", Period: 10 * time.Millisecond, Check: func(context.Context) error { return nil }})
	time.Sleep(50 * time.Millisecond)
	if res := ok.Stop(); len(res.Windows) != 0 || res.Polls == 0 {
		t.Errorf("ok probe: %s", res.Summary())
	}
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close() // nothing listens: connection refused
	bad := Start(context.Background(), Probe{Name: "bad", Period: 10 * time.Millisecond, Timeout: time.Second,
		Check: HTTPAny(http.DefaultClient, func() []string { return []string{srv.URL} })})
	time.Sleep(50 * time.Millisecond)
	res := bad.Stop()
	if len(res.Windows) != 1 || res.Windows[0].End != res.End || !strings.Contains(res.Windows[0].LastErr, "refused") {
		t.Errorf("bad probe: %s %v", res.Summary(), res.WindowList())
	}
}

// A server slower than one poll's Timeout is out for those polls; one that
// answers within it is not, and its slowest answer is reported. The margins
// are wide (a 20 ms timeout against 150 ms answers, 2 s against 150 ms)
// because a loaded machine stretches every answer.
func TestASlowAnswerIsOutOnlyPastTheTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(150 * time.Millisecond):
			w.WriteHeader(http.StatusOK)
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	check := HTTPAny(srv.Client(), func() []string { return []string{srv.URL} })
	short := Start(context.Background(), Probe{Name: "short", Period: 10 * time.Millisecond, Timeout: 20 * time.Millisecond, Check: check})
	long := Start(context.Background(), Probe{Name: "long", Period: 10 * time.Millisecond, Timeout: 2 * time.Second, Check: check})
	time.Sleep(time.Second)
	s, l := short.Stop(), long.Stop()
	if len(s.Windows) != 1 || s.Failures == 0 || s.Slowest != 0 {
		t.Errorf("answers past a 20ms timeout: %s, want one window and no answer in time", s.Summary())
	}
	if len(l.Windows) != 0 || l.Polls == 0 || l.Slowest < 150*time.Millisecond {
		t.Errorf("answers within a 2s timeout: %s, want no window and the slowest answer 150ms or more", l.Summary())
	}
	if want := fmt.Sprintf("slowest answer %.2fs", l.Slowest.Seconds()); !strings.Contains(l.Summary(), want) {
		t.Errorf("summary %q does not say %q", l.Summary(), want)
	}
}
