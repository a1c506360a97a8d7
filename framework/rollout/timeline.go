package rollout

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// ControlPlanePool is the pool of a cluster's control plane Machines; a
// worker Machine's pool is its MachineDeployment.
const ControlPlanePool = "control-plane"

// Machine is one Machine's life as the watch saw it.
type Machine struct {
	Name, UID string
	// Pool is ControlPlanePool or the MachineDeployment's name.
	Pool    string
	Version string
	Node    string
	// Created is the Machine's creationTimestamp; Ready the first poll
	// that saw it Ready with a Node; Gone the first poll that no longer
	// saw it (zero while it lives).
	Created, Ready, Gone time.Time
	// Existed: the Machine was there when the watch started.
	Existed bool
	// Conditions are its last non-True conditions ("Ready=False
	// (NodeNotReady): ..."), for the message when it gets stuck.
	Conditions []string
}

// Timeline is every Machine a watch saw, in creation order, and the most
// Machines each pool had at once.
type Timeline struct {
	Start, End time.Time
	Machines   []*Machine
	// MaxAlive is, per pool, the most Machines seen at one poll.
	MaxAlive map[string]int
	byUID    map[string]*Machine
}

func newTimeline(now time.Time) *Timeline {
	return &Timeline{Start: now, MaxAlive: map[string]int{}, byUID: map[string]*Machine{}}
}

// observe records one poll's Machines.
func (t *Timeline) observe(now time.Time, ms []clusterv1.Machine, first bool) {
	seen := map[string]bool{}
	alive := map[string]int{}
	for i := range ms {
		m := &ms[i]
		uid := string(m.UID)
		seen[uid] = true
		rec, ok := t.byUID[uid]
		if !ok {
			rec = &Machine{Name: m.Name, UID: uid, Pool: poolOf(m), Created: m.CreationTimestamp.Time, Existed: first}
			t.byUID[uid] = rec
			t.Machines = append(t.Machines, rec)
		}
		rec.Version, rec.Node = m.Spec.Version, m.Status.NodeRef.Name
		rec.Conditions = notTrue(m.Status.Conditions)
		if rec.Ready.IsZero() && ready(m) {
			rec.Ready = now
		}
		if m.DeletionTimestamp == nil {
			alive[rec.Pool]++
		}
	}
	for _, rec := range t.Machines {
		if rec.Gone.IsZero() && !seen[rec.UID] {
			rec.Gone = now
		}
	}
	for p, n := range alive {
		t.MaxAlive[p] = max(t.MaxAlive[p], n)
	}
	sort.SliceStable(t.Machines, func(i, j int) bool { return t.Machines[i].Created.Before(t.Machines[j].Created) })
	t.End = now
}

func poolOf(m *clusterv1.Machine) string {
	if _, ok := m.Labels[clusterv1.MachineControlPlaneLabel]; ok {
		return ControlPlanePool
	}
	if d := m.Labels[clusterv1.MachineDeploymentNameLabel]; d != "" {
		return d
	}
	return "other"
}

func ready(m *clusterv1.Machine) bool {
	if m.DeletionTimestamp != nil || m.Status.NodeRef.Name == "" {
		return false
	}
	for _, c := range m.Status.Conditions {
		if c.Type == clusterv1.MachineReadyCondition {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

// telling are the conditions that say why a Machine is not done: Ready
// sums up the others (bootstrap, infrastructure, node, deletion stage);
// UpToDate says what is still to change. Paused, Deleting and Updating are
// False on a healthy Machine, and the per-component ones repeat Ready.
var telling = []string{clusterv1.MachineReadyCondition, clusterv1.MachineUpToDateCondition}

// maxConditionMessage keeps one condition of a progress line readable.
const maxConditionMessage = 240

func notTrue(cs []metav1.Condition) []string {
	var out []string
	for _, c := range cs {
		if c.Status == metav1.ConditionTrue || !slices.Contains(telling, c.Type) {
			continue
		}
		s := fmt.Sprintf("%s=%s", c.Type, c.Status)
		if c.Reason != "" {
			s += " (" + c.Reason + ")"
		}
		if msg := strings.Join(strings.Fields(strings.ReplaceAll(c.Message, "* ", "")), " "); msg != "" {
			if len(msg) > maxConditionMessage {
				msg = msg[:maxConditionMessage] + "..."
			}
			s += ": " + msg
		}
		out = append(out, s)
	}
	return out
}

// Alive are the Machines the last poll saw.
func (t *Timeline) Alive() []*Machine {
	var out []*Machine
	for _, m := range t.Machines {
		if m.Gone.IsZero() {
			out = append(out, m)
		}
	}
	return out
}

// Existing are the Machines that were there when the watch started.
func (t *Timeline) Existing() []*Machine {
	var out []*Machine
	for _, m := range t.Machines {
		if m.Existed {
			out = append(out, m)
		}
	}
	return out
}

// Pools counts the last poll's Machines per pool: what the cluster settled at.
func (t *Timeline) Pools() map[string]int {
	out := map[string]int{}
	for _, m := range t.Alive() {
		out[m.Pool]++
	}
	return out
}

// Replaced are the Machines that were there at the start and are gone.
func (t *Timeline) Replaced() []*Machine {
	var out []*Machine
	for _, m := range t.Machines {
		if m.Existed && !m.Gone.IsZero() {
			out = append(out, m)
		}
	}
	return out
}

// New are the Machines created after the watch started.
func (t *Timeline) New() []*Machine {
	var out []*Machine
	for _, m := range t.Machines {
		if !m.Existed {
			out = append(out, m)
		}
	}
	return out
}

// Events are the timeline's moments in time order, each as seconds since
// the watch started: "+12.0s machine wl-md-0-x created (md-0, v1.33.1)".
func (t *Timeline) Events() []Event {
	var out []Event
	add := func(at time.Time, m *Machine, what string) {
		if at.IsZero() || (m.Existed && what == "created") {
			return
		}
		out = append(out, Event{At: at.Sub(t.Start), Machine: m.Name, Pool: m.Pool, What: what, Version: m.Version})
	}
	for _, m := range t.Machines {
		created := m.Created
		if created.Before(t.Start) {
			created = t.Start
		}
		add(created, m, "created")
		if !m.Existed {
			add(m.Ready, m, "ready")
		}
		add(m.Gone, m, "gone")
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At < out[j].At })
	return out
}

// Event is one moment of a timeline.
type Event struct {
	At                           time.Duration
	Machine, Pool, What, Version string
}

func (e Event) String() string {
	return fmt.Sprintf("+%.1fs %s %s (%s, %s)", e.At.Seconds(), e.Machine, e.What, e.Pool, e.Version)
}

// describe is one Machine for a message: its pool, version, node and the
// conditions that are not True.
func (m *Machine) describe() string {
	s := fmt.Sprintf("%s (%s, %s, node %s)", m.Name, m.Pool, m.Version, dash(m.Node))
	if len(m.Conditions) > 0 {
		s += ": " + strings.Join(m.Conditions, "; ")
	}
	return s
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
