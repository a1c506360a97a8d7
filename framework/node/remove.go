package node

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"sigs.k8s.io/cluster-api/test/infrastructure/container"
)

// removeAll force-removes the containers by ref (an ID or a name) with
// their anonymous volumes, all at the same time: a kind or CAPD node's
// removal is seconds of Docker deleting its /var volume, and two run in
// little more than the time of one (13.5 s one after the other, 7.5 s
// together, measured here). It goes on after a failure; removed keeps the
// input's order, errors name each container that failed.
func removeAll(ctx context.Context, rt container.Runtime, cs []removal) (removed []string, err error) {
	errs := make([]error, len(cs))
	var mu sync.Mutex // Cluster API's FakeRuntime records calls in an unguarded slice
	_, fake := rt.(*container.FakeRuntime)
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Go(func() {
			if fake {
				mu.Lock()
				defer mu.Unlock()
			}
			errs[i] = rt.DeleteContainer(ctx, c.ref)
		})
	}
	wg.Wait()
	var failed []string
	for i, c := range cs {
		if errs[i] != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", c.what, errs[i]))
			continue
		}
		removed = append(removed, c.name)
	}
	if len(failed) > 0 {
		return removed, fmt.Errorf("removing containers: %s", strings.Join(failed, "; "))
	}
	return removed, nil
}

// removal is one container for removeAll: what to remove it by, its name,
// and how an error names it.
type removal struct{ ref, name, what string }
