package suites

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// The clusters of a stage run side by side: one that fails, or panics,
// stops none of the others, and each keeps its own steps and error.
func TestRunJobsSideBySideEachWithItsOwnResult(t *testing.T) {
	started := make(chan string, 3)
	release := make(chan struct{})
	job := func(id string, err error, panics bool) clusterJob {
		return clusterJob{ID: id, Name: "c-" + id, Run: func(ctx context.Context) ([]Step, error) {
			started <- id
			<-release
			if panics {
				panic("boom in " + id)
			}
			return []Step{{Name: "apply", Duration: time.Second}}, err
		}}
	}
	go func() {
		// All three must have started before any may end: side by side.
		for range 3 {
			<-started
		}
		close(release)
	}()
	res := runJobs(t.Context(), []clusterJob{job("workload", nil, false), job("workload-2", errors.New("no nodes"), false), job("workload-3", nil, true)})
	if res[0].err != nil || len(res[0].steps) != 1 || res[0].steps[0].Name != "apply" {
		t.Errorf("workload: %+v", res[0])
	}
	if res[1].err == nil || res[1].err.Error() != "no nodes" || len(res[1].steps) != 1 {
		t.Errorf("workload-2: %+v", res[1])
	}
	if res[2].err == nil || !strings.Contains(res[2].err.Error(), "panic: boom in workload-3") {
		t.Errorf("workload-3: %+v", res[2])
	}
}
