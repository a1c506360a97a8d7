package move

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/wait"
)

// apiServer answers /readyz "ok" while up is true, 500 otherwise.
func apiServer(t *testing.T, up *atomic.Bool) *kube.Cluster {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" && up.Load() {
			fmt.Fprint(w, "ok")
			return
		}
		http.Error(w, "etcd not ready", http.StatusInternalServerError)
	}))
	t.Cleanup(srv.Close)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	kc := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: %q}}]\nusers: [{name: u, user: {}}]\n"+
		"contexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n", srv.URL)
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	k, err := kube.Connect(path)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// The settle-before counts the polls a watch made before the move started;
// a bad answer starts the window again, so the move waits for a quiet
// window right before it, and one that never comes is an error that says
// what was last seen.
func TestSettleBeforeCountsTheWatchesEarlierPolls(t *testing.T) {
	var srcUp, dstUp atomic.Bool
	srcUp.Store(true)
	dstUp.Store(true)
	src, dst := apiServer(t, &srcUp), apiServer(t, &dstUp)
	ctx := context.Background()
	poll := 20 * time.Millisecond
	sw, tw := kube.WatchReady(ctx, src, poll), kube.WatchReady(ctx, dst, poll)
	defer sw.Stop()
	defer tw.Stop()
	settle := 300 * time.Millisecond
	in := PreCheckInput{Settle: wait.Interval{Timeout: settle, Poll: poll}, SourceWatch: sw, TargetWatch: tw}

	time.Sleep(settle + 50*time.Millisecond) // the earlier stages' time
	start := time.Now()
	if err := answeredThroughout(ctx, in, settle); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > settle/2 {
		t.Errorf("the window was full before the check started, yet it took %s", took)
	}

	dstUp.Store(false)
	time.Sleep(5 * poll)
	dstUp.Store(true)
	start = time.Now()
	if err := answeredThroughout(ctx, in, settle); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < settle-2*poll {
		t.Errorf("a bad answer just before must start the window again: passed after %s", took)
	}

	short := in
	short.Settle.Timeout = 50 * time.Millisecond
	srcUp.Store(false)
	time.Sleep(3 * poll)
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	err := answeredThroughout(cctx, short, short.Settle.Timeout)
	if err == nil || !strings.Contains(err.Error(), "source: last answer bad") || !strings.Contains(err.Error(), "etcd not ready") {
		t.Fatalf("a source that stopped answering: %v", err)
	}
}
