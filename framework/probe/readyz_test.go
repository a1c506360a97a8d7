package probe

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// The body an API server answered while its etcd member was being replaced
// (the platform's CI, 2026-12-07), cut short.
const etcdFailedBody = "[+]ping ok\n[+]log ok\n[-]etcd failed: reason withheld\n[-]etcd-readiness failed: reason withheld\n" +
	"[+]informer-sync ok\n[+]poststarthook/start-apiserver-admission-initializer ok\nreadyz check failed\n"

func TestReadyzNamesTheFailedChecks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   string // "" is no error
	}{
		{"ready", http.StatusOK, "ok", ""},
		{"etcd out", http.StatusInternalServerError, etcdFailedBody, "/readyz: etcd failed, etcd-readiness failed"},
		// No check named: the client's own error, whatever it says.
		{"other 500", http.StatusInternalServerError, "something else", "something else"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/readyz" {
					http.NotFound(w, r)
					return
				}
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			err = Readyz(cs)(context.Background())
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("want no error, got %v", err)
			case tc.want != "" && err == nil:
				t.Fatalf("want an error with %q, got none", tc.want)
			case tc.want != "" && tc.name == "etcd out" && err.Error() != tc.want:
				t.Fatalf("want %q, got %q", tc.want, err)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("want an error with %q, got %q", tc.want, err)
			}
		})
	}
}
