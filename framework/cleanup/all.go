package cleanup

import (
	"context"
	"errors"
	"fmt"

	"github.com/tkg-e2e/harness/framework/wait"
)

// All runs Run, then LeakCheck on the names the state recorded, and writes
// the outcome into the state ("done", or what failed or leaked). It is what
// the suite's teardown and `harness cleanup` (make clean-run) both call.
func All(ctx context.Context, in Input) error {
	rep, err := Run(ctx, in)
	p := wait.Printer{W: in.Progress, Prefix: in.Prefix}
	if rep != nil {
		p.Printf("cleanup: %s", rep.String())
	}
	leaks, lerr := LeakCheck(ctx, LeakCheckInput{State: in.State})
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	switch {
	case lerr != nil:
		errs = append(errs, fmt.Errorf("leak check: %w", lerr))
	case !leaks.Clean():
		errs = append(errs, fmt.Errorf("left behind after cleanup: %s", leaks.String()))
	default:
		p.Printf("leak check: nothing of the run is left (%s)", leaks.Checked)
	}
	outcome := "done: nothing left"
	if len(errs) > 0 {
		outcome = "failed: " + errors.Join(errs...).Error()
	}
	if in.State != nil {
		_ = in.State.SetCleanup(outcome)
	}
	return errors.Join(errs...)
}
