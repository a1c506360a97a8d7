package boskos_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tkg-e2e/harness/framework/boskos"
)

func TestUnreachableServerFailsAtOnce(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	start := time.Now()
	_, err = boskos.AcquireWait(context.Background(), &boskos.Client{URL: "http://" + addr},
		boskos.AcquireOptions{Type: "t", Owner: "o", Timeout: time.Minute, Poll: time.Second})
	var u *boskos.UnreachableError
	if !errors.As(err, &u) || time.Since(start) > 5*time.Second {
		t.Fatalf("want an immediate UnreachableError, got %v after %s", err, time.Since(start))
	}
}

// The server's answers are what Boskos writes (handlers.go): the client
// tells none-free, no-such-type and lost apart by status and text.
func TestErrorKinds(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/acquire":
			if r.URL.Query().Get("type") == "none" {
				http.Error(w, `Acquire failed: resource type "none" does not exist`, http.StatusNotFound)
				return
			}
			http.Error(w, "Acquire failed: no available resource t, try again later.", http.StatusNotFound)
		case "/update":
			http.Error(w, "Update failed: owner mismatch request by a, currently owned by b", http.StatusUnauthorized)
		case "/release":
			http.Error(w, "Done failed: state mismatch", http.StatusConflict)
		}
	}))
	defer srv.Close()
	c := &boskos.Client{URL: srv.URL}
	ctx := context.Background()
	if _, err := c.Acquire(ctx, "t", "free", "busy", "o", ""); !boskos.IsNoneFree(err) || boskos.IsUnknownType(err) {
		t.Errorf("none free: %v", err)
	}
	if _, err := c.Acquire(ctx, "none", "free", "busy", "o", ""); !boskos.IsUnknownType(err) || boskos.IsNoneFree(err) {
		t.Errorf("unknown type: %v", err)
	}
	if err := c.Update(ctx, "n", "a", "busy", nil); !boskos.IsLost(err) || !strings.Contains(err.Error(), "HTTP 401") {
		t.Errorf("owner mismatch: %v", err)
	}
	if err := c.Release(ctx, "n", "a", "free"); !boskos.IsLost(err) {
		t.Errorf("state mismatch: %v", err)
	}
}
