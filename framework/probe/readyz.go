package probe

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/client-go/kubernetes"
)

// Readyz probes an API server's /readyz through its clientset. A 500
// answer names the checks that failed ("/readyz: etcd failed") instead of
// quoting the whole body: a window's error is repeated in failure messages
// and reports, where two dozen "[+]… ok" lines hid which check it was and
// pushed the other windows out of CI's summary.
func Readyz(cs kubernetes.Interface) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err == nil {
			return nil
		}
		if failed := failedChecks(string(body) + "\n" + err.Error()); len(failed) > 0 {
			return fmt.Errorf("/readyz: %s", strings.Join(failed, ", "))
		}
		return err
	}
}

// A failed check's line in /readyz's verbose body ("[-]etcd failed: reason
// withheld"); in client-go's error for a 500 the body's newlines are
// quoted as \n, so the name ends at the first character a check name
// cannot hold.
var failedCheck = regexp.MustCompile(`\[-\]([A-Za-z0-9/_.-]+) failed`)

// failedChecks lists each failed check once, as "etcd failed", in order.
func failedChecks(s string) []string {
	var out []string
	for _, m := range failedCheck.FindAllStringSubmatch(s, -1) {
		if c := m[1] + " failed"; !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}
