package vsphere

import (
	"cmp"
	"context"
	"fmt"
	"path"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/vmware/govmomi/event"
	"github.com/vmware/govmomi/task"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/tkg-e2e/harness/framework/artifacts"
)

// Tasks and events are read for the whole datacenter within the run's time
// window: an OVA import runs against a resource pool, a clone against a
// folder and a host, so a narrower entity would miss the task that failed.

const maxTasks = 1000

func (c *collection) tasks(ctx context.Context) error {
	m := task.NewManager(c.c)
	dc := c.dc.Reference()
	since := c.in.Since
	hc, err := m.CreateCollectorForTasks(ctx, types.TaskFilterSpec{
		Entity: &types.TaskFilterSpecByEntity{Entity: dc, Recursion: types.TaskFilterSpecRecursionOptionAll},
		Time:   &types.TaskFilterSpecByTime{TimeType: types.TaskFilterSpecTimeOptionQueuedTime, BeginTime: &since},
	})
	if err != nil {
		return fmt.Errorf("task collector: %w", err)
	}
	defer func() { _ = hc.Destroy(context.WithoutCancel(ctx)) }()
	var infos []types.TaskInfo
	for len(infos) < maxTasks {
		page, err := hc.ReadNextTasks(ctx, 100)
		if err != nil {
			return fmt.Errorf("read tasks: %w", err)
		}
		if len(page) == 0 {
			break
		}
		infos = append(infos, page...)
	}
	sort.SliceStable(infos, func(i, j int) bool { return infos[i].QueueTime.Before(infos[j].QueueTime) })

	var b strings.Builder
	fmt.Fprintf(&b, "# %d tasks in %s since %s, oldest first. QUEUED STATE TASK ENTITY USER (DURATION): ERROR\n",
		len(infos), c.dc.InventoryPath, since.UTC().Format(time.RFC3339))
	var failed []artifacts.VSphereTask
	for _, t := range infos {
		name := taskName(t)
		dur := ""
		if t.StartTime != nil && t.CompleteTime != nil {
			dur = fmt.Sprintf(" (%s)", t.CompleteTime.Sub(*t.StartTime).Round(time.Millisecond))
		}
		msg := ""
		if t.Error != nil {
			msg = ": " + faultMessage(t.Error)
		}
		fmt.Fprintf(&b, "%s %-7s %s %s %s%s%s\n", t.QueueTime.UTC().Format(time.RFC3339), t.State, name, cmp.Or(t.EntityName, "-"), taskUser(t), dur, msg)
		if t.State == types.TaskInfoStateError {
			failed = append(failed, artifacts.VSphereTask{Name: name, Entity: t.EntityName, State: string(t.State),
				Error: c.w.Redact(faultMessage(t.Error)), Queued: t.QueueTime.UTC().Format(time.RFC3339)})
		}
	}
	c.mu.Lock()
	c.findings.FailedTasks = failed
	c.mu.Unlock()
	return c.w.WriteFile(path.Join(Folder, "tasks.txt"), []byte(b.String()))
}

func (c *collection) events(ctx context.Context) error {
	since := c.in.Since
	evs, err := event.NewManager(c.c).QueryEvents(ctx, types.EventFilterSpec{
		Entity:   &types.EventFilterSpecByEntity{Entity: c.dc.Reference(), Recursion: types.EventFilterSpecRecursionOptionAll},
		Time:     &types.EventFilterSpecByTime{BeginTime: &since},
		MaxCount: int32(c.in.MaxEvents),
	})
	if err != nil {
		return fmt.Errorf("query events: %w", err)
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].GetEvent().CreatedTime.Before(evs[j].GetEvent().CreatedTime) })
	var b strings.Builder
	fmt.Fprintf(&b, "# %d events in %s since %s (at most %d), oldest first. TIME SEVERITY TYPE USER: MESSAGE\n",
		len(evs), c.dc.InventoryPath, since.UTC().Format(time.RFC3339), c.in.MaxEvents)
	var bad []string
	for _, be := range evs {
		e := be.GetEvent()
		sev := severity(be)
		line := fmt.Sprintf("%s %-7s %s %s: %s", e.CreatedTime.UTC().Format(time.RFC3339), sev, eventType(be), cmp.Or(e.UserName, "-"),
			strings.Join(strings.Fields(e.FullFormattedMessage), " "))
		b.WriteString(line + "\n")
		if sev == "error" || sev == "warning" {
			bad = append(bad, c.w.Redact(line))
		}
	}
	c.mu.Lock()
	c.findings.ErrorEvents = bad
	c.mu.Unlock()
	if len(evs) == 0 {
		b.WriteString("(no events in the window)\n")
	}
	return c.w.WriteFile(path.Join(Folder, "events.txt"), []byte(b.String()))
}

func taskName(t types.TaskInfo) string {
	if t.DescriptionId != "" {
		return t.DescriptionId
	}
	return t.Name
}

func taskUser(t types.TaskInfo) string {
	if r, ok := t.Reason.(*types.TaskReasonUser); ok {
		return r.UserName
	}
	return "-"
}

func faultMessage(f *types.LocalizedMethodFault) string {
	if f == nil {
		return ""
	}
	msg := f.LocalizedMessage
	if f.Fault != nil {
		kind := reflect.TypeOf(f.Fault).Elem().Name()
		if msg == "" || strings.HasSuffix(msg, kind) {
			return kind
		}
		return kind + ": " + msg
	}
	return msg
}

// severity follows vCenter's own categories where the event has one, and
// treats failure-named event types as errors where it has none.
func severity(be types.BaseEvent) string {
	switch e := be.(type) {
	case *types.EventEx:
		if e.Severity != "" {
			return e.Severity
		}
	case *types.ExtendedEvent:
		return "info"
	case *types.TaskEvent:
		if e.Info.State == types.TaskInfoStateError {
			return "error"
		}
	}
	name := eventType(be)
	switch {
	case strings.Contains(name, "Failed"), strings.Contains(name, "Error"), strings.Contains(name, "Fault"):
		return "error"
	case strings.Contains(name, "Warning"), strings.Contains(name, "Disconnected"):
		return "warning"
	}
	return "info"
}

func eventType(be types.BaseEvent) string {
	if e, ok := be.(*types.EventEx); ok && e.EventTypeId != "" {
		return e.EventTypeId
	}
	return reflect.TypeOf(be).Elem().Name()
}
