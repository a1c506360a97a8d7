package cleanup

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tkg-e2e/harness/framework/wait"
)

// All runs Run, then every LeakCheck, and writes the outcome into the state:
// "done: nothing left" only when every check ran and found nothing, else
// what failed or leaked. It is what the suite's teardown and `harness
// cleanup` (make clean-run) both call.
func All(ctx context.Context, in Input) error {
	// One notion of the run for the deletions and the checks after them.
	ctx = WithRun(ctx, in.State)
	rep, err := Run(ctx, in)
	p := wait.Printer{W: in.Progress, Prefix: in.Prefix}
	if rep != nil {
		p.Printf("cleanup: %s", rep.String())
	}
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	var leaks, checked []string
	for _, check := range in.LeakChecks {
		l, c, lerr := check(ctx, in.State)
		if lerr != nil {
			errs = append(errs, fmt.Errorf("leak check: %w", lerr))
			continue
		}
		leaks = append(leaks, l...)
		checked = append(checked, c)
	}
	switch {
	case len(leaks) > 0:
		errs = append(errs, fmt.Errorf("left behind after cleanup: %s (%s)", strings.Join(leaks, ", "), strings.Join(checked, "; ")))
	case len(in.LeakChecks) == 0:
		p.Printf("leak check: none configured")
	case len(errs) == 0:
		p.Printf("leak check: nothing of the run is left (%s)", strings.Join(checked, "; "))
	}
	outcome := "done: nothing left"
	if len(in.LeakChecks) == 0 {
		outcome = "done: no leak check configured"
	}
	if len(errs) > 0 {
		outcome = "failed: " + errors.Join(errs...).Error()
	}
	if in.State != nil {
		_ = in.State.SetCleanup(outcome)
	}
	return errors.Join(errs...)
}
