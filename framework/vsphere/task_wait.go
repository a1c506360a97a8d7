package vsphere

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/task"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/tkg-e2e/harness/framework/wait"
)

// taskWaits is how long and how often to wait for vCenter tasks; the values come
// from the config intervals.
type taskWaits struct {
	Timeout  time.Duration
	Interval time.Duration
	Progress io.Writer
	Prefix   string
}

// waitTask waits for a vCenter task through wait.For, so a stuck task is
// reported with its last state (queued, running 40%) rather than hanging.
// Each poll blocks on the property collector for up to one interval, so a
// task that ends is seen at once, not at the next tick.
func waitTask(ctx context.Context, t *object.Task, what string, w taskWaits) error {
	block := w.Interval
	if block <= 0 {
		block = time.Second
	}
	pc := property.DefaultCollector(t.Client())
	return wait.For(ctx, wait.Options{What: what, Timeout: w.Timeout, Interval: w.Interval, Progress: w.Progress, Prefix: w.Prefix},
		func(ctx context.Context) (bool, string, error) {
			bctx, cancel := context.WithTimeout(ctx, block)
			defer cancel()
			_, err := t.WaitForResult(bctx)
			var terr task.Error
			switch {
			case err == nil:
				return true, "success", nil
			case errors.As(err, &terr):
				return false, "error", wait.Permanent(err)
			case bctx.Err() == nil:
				return false, "", err
			}
			var mt mo.Task
			if err := pc.RetrieveOne(ctx, t.Reference(), []string{"info"}, &mt); err != nil {
				return false, "", err
			}
			if mt.Info.State == types.TaskInfoStateRunning {
				return false, fmt.Sprintf("task %s running %d%%", mt.Info.Key, mt.Info.Progress), nil
			}
			return false, fmt.Sprintf("task %s %s", mt.Info.Key, mt.Info.State), nil
		})
}

// destroyVM deletes a VM or template and waits for it to be gone.
func destroyVM(ctx context.Context, vm *object.VirtualMachine, w taskWaits) error {
	t, err := vm.Destroy(ctx)
	if err != nil {
		return err
	}
	return waitTask(ctx, t, fmt.Sprintf("deletion of %s", vmLabel(vm)), w)
}

func vmLabel(vm *object.VirtualMachine) string {
	if vm.InventoryPath != "" {
		return vm.InventoryPath
	}
	return vm.Reference().String()
}
