package probe

import (
	"context"
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
	r := Start(context.Background(), Probe{Name: "probe Service", Period: 20 * time.Millisecond,
		Check: HTTPAny(srv.Client(), func() []string { return []string{srv.URL} })})
	time.Sleep(100 * time.Millisecond)
	down.Store(true)
	time.Sleep(400 * time.Millisecond)
	down.Store(false)
	time.Sleep(100 * time.Millisecond)
	res := r.Stop()

	if len(res.Windows) != 1 {
		t.Fatalf("windows %v, want one", res.WindowList())
	}
	if got := res.Total(); got < 340*time.Millisecond || got > 600*time.Millisecond {
		t.Errorf("outage %s, want about 400ms", got)
	}
	err := res.Within(200 * time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "over its bound of 200ms") || !strings.Contains(err.Error(), "HTTP 503") {
		t.Errorf("Within(200ms) = %v, want the window and its last error", err)
	}
	if err := res.Within(time.Second); err != nil {
		t.Errorf("Within(1s) = %v", err)
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
	bad := Start(context.Background(), Probe{Name: "bad", Period: 10 * time.Millisecond,
		Check: HTTPAny(http.DefaultClient, func() []string { return []string{srv.URL} })})
	time.Sleep(50 * time.Millisecond)
	res := bad.Stop()
	if len(res.Windows) != 1 || res.Windows[0].End != res.End || !strings.Contains(res.Windows[0].LastErr, "refused") {
		t.Errorf("bad probe: %s %v", res.Summary(), res.WindowList())
	}
}
