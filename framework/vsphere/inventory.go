package vsphere

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"time"

	"github.com/vmware/govmomi/event"
	"github.com/vmware/govmomi/task"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	"sigs.k8s.io/yaml"

	"github.com/tkg-e2e/harness/framework/redact"
)

// Inventory is what the run's artifacts keep of the vSphere side: the
// templates and VMs of the folder and what vCenter did recently, to explain a
// failed import after the simulator or the session is gone.
type Inventory struct {
	Server     string      `json:"server"`
	Datacenter string      `json:"datacenter"`
	Folder     string      `json:"folder"`
	Collected  time.Time   `json:"collected"`
	VMs        []VMSummary `json:"vms"`
	Tasks      []TaskEntry `json:"tasks"`
	Events     []EventItem `json:"events"`
	// Errors are parts that could not be collected; the rest is still written.
	Errors []string `json:"errors,omitempty"`
}

// VMSummary is one VM or template.
type VMSummary struct {
	Name       string         `json:"name"`
	Path       string         `json:"path"`
	Template   bool           `json:"template"`
	PowerState string         `json:"powerState"`
	GuestState string         `json:"guestState,omitempty"`
	Tools      string         `json:"toolsRunningStatus,omitempty"`
	GuestID    string         `json:"guestId,omitempty"`
	CPUs       int32          `json:"cpus,omitempty"`
	MemoryMB   int32          `json:"memoryMB,omitempty"`
	Annotation string         `json:"annotation,omitempty"`
	OVASHA256  string         `json:"ovaSHA256,omitempty"`
	Properties []VAppProperty `json:"vappProperties,omitempty"`
}

// TaskEntry is one vCenter task.
type TaskEntry struct {
	Key       string     `json:"key"`
	Name      string     `json:"name"`
	Entity    string     `json:"entity,omitempty"`
	State     string     `json:"state"`
	Error     string     `json:"error,omitempty"`
	Queued    time.Time  `json:"queued"`
	Started   *time.Time `json:"started,omitempty"`
	Completed *time.Time `json:"completed,omitempty"`
}

// EventItem is one vCenter event.
type EventItem struct {
	Key     int32     `json:"key"`
	Type    string    `json:"type"`
	Created time.Time `json:"created"`
	User    string    `json:"user,omitempty"`
	Entity  string    `json:"entity,omitempty"`
	Message string    `json:"message"`
}

// InventoryInput says what to collect. Limits default to 50.
type InventoryInput struct {
	Datacenter string
	Folder     string
	MaxTasks   int32
	MaxEvents  int32
}

// CollectInventory gathers the inventory. It returns what it could collect
// even when a part fails (listed in Errors); only an unresolvable datacenter
// or folder is an error.
func (s *Session) CollectInventory(ctx context.Context, in InventoryInput) (*Inventory, error) {
	t, err := s.resolveFolder(ctx, Placement{Datacenter: in.Datacenter, Folder: in.Folder})
	if err != nil {
		return nil, err
	}
	inv := &Inventory{Server: s.URL.String(), Datacenter: t.Datacenter.Name(), Folder: t.Folder.InventoryPath, Collected: time.Now().UTC()}
	note := func(what string, err error) {
		if err != nil {
			inv.Errors = append(inv.Errors, fmt.Sprintf("%s: %v", what, err))
		}
	}
	var vms []mo.VirtualMachine
	vms, err = folderVMs(ctx, s, t)
	note("listing VMs", err)
	for _, vm := range vms {
		inv.VMs = append(inv.VMs, summarize(t.Folder.InventoryPath, vm))
	}
	inv.Tasks, err = recentTasks(ctx, s, t, limit(in.MaxTasks))
	note("reading tasks", err)
	inv.Events, err = recentEvents(ctx, s, t, limit(in.MaxEvents))
	note("reading events", err)
	return inv, nil
}

func limit(n int32) int32 {
	if n <= 0 {
		return 50
	}
	return n
}

func folderVMs(ctx context.Context, s *Session, t *Target) ([]mo.VirtualMachine, error) {
	v, err := view.NewManager(s.Vim()).CreateContainerView(ctx, t.Folder.Reference(), []string{"VirtualMachine"}, true)
	if err != nil {
		return nil, err
	}
	defer func() { _ = v.Destroy(context.WithoutCancel(ctx)) }()
	var vms []mo.VirtualMachine
	err = v.Retrieve(ctx, []string{"VirtualMachine"}, []string{"name", "config", "runtime.powerState", "guest.guestState", "guest.toolsRunningStatus"}, &vms)
	sort.Slice(vms, func(i, j int) bool { return vms[i].Name < vms[j].Name })
	return vms, err
}

func summarize(folder string, vm mo.VirtualMachine) VMSummary {
	out := VMSummary{Name: vm.Name, Path: folder + "/" + vm.Name, PowerState: string(vm.Runtime.PowerState)}
	if vm.Guest != nil {
		out.GuestState, out.Tools = vm.Guest.GuestState, vm.Guest.ToolsRunningStatus
	}
	if c := vm.Config; c != nil {
		out.Template, out.GuestID, out.Annotation = c.Template, c.GuestId, c.Annotation
		out.CPUs, out.MemoryMB = c.Hardware.NumCPU, c.Hardware.MemoryMB
		out.OVASHA256 = AnnotationSHA256(c.Annotation)
		out.Properties = vappProperties(c)
	}
	return out
}

func recentTasks(ctx context.Context, s *Session, t *Target, n int32) ([]TaskEntry, error) {
	c, err := task.NewManager(s.Vim()).CreateCollectorForTasks(ctx, types.TaskFilterSpec{
		Entity: &types.TaskFilterSpecByEntity{Entity: t.Datacenter.Reference(), Recursion: types.TaskFilterSpecRecursionOptionAll},
	})
	if err != nil {
		return nil, err
	}
	defer func() { _ = c.Destroy(context.WithoutCancel(ctx)) }()
	if err := c.SetPageSize(ctx, n); err != nil {
		return nil, err
	}
	infos, err := c.LatestPage(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]TaskEntry, 0, len(infos))
	for _, i := range infos {
		e := TaskEntry{Key: i.Key, Name: i.DescriptionId, Entity: i.EntityName, State: string(i.State), Queued: i.QueueTime,
			Started: i.StartTime, Completed: i.CompleteTime}
		if i.Error != nil {
			e.Error = i.Error.LocalizedMessage
			if e.Error == "" {
				e.Error = reflect.TypeOf(i.Error.Fault).Elem().Name()
			}
		}
		out = append(out, e)
	}
	return out, nil
}

func recentEvents(ctx context.Context, s *Session, t *Target, n int32) ([]EventItem, error) {
	events, err := event.NewManager(s.Vim()).QueryEvents(ctx, types.EventFilterSpec{
		Entity:   &types.EventFilterSpecByEntity{Entity: t.Datacenter.Reference(), Recursion: types.EventFilterSpecRecursionOptionAll},
		MaxCount: n,
	})
	if err != nil {
		return nil, err
	}
	out := make([]EventItem, 0, len(events))
	for _, be := range events {
		e := be.GetEvent()
		item := EventItem{Key: e.Key, Type: reflect.TypeOf(be).Elem().Name(), Created: e.CreatedTime, User: e.UserName, Message: e.FullFormattedMessage}
		if e.Vm != nil {
			item.Entity = e.Vm.Name
		}
		out = append(out, item)
	}
	return out, nil
}

// WriteInventory writes inventory.yaml and inventory.json into dir, masked
// by r (nil masks the secret shapes only). The password never enters the
// inventory, but annotations and event texts are free text written by others.
func WriteInventory(dir string, inv *Inventory, r *redact.Redactor) error {
	if r == nil {
		r = redact.New()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	j, err := json.MarshalIndent(inv, "", "  ")
	if err != nil {
		return err
	}
	y, err := yaml.JSONToYAML(j)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "inventory.json"), r.Bytes(j), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "inventory.yaml"), r.Bytes(y), 0o644)
}
