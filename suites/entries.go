package suites

import (
	"context"
	"fmt"
	"sync"

	. "github.com/onsi/ginkgo/v2"
)

// A Ginkgo report entry belongs to the spec running when it is added. A
// tail runs in a goroutine beside later stages' specs, so an entry its
// code added directly would land on whichever spec ran at that moment
// (scale's, say, for management-upgrade's rollout steps). Code that may run
// in a tail reports through AddEntry: in a tail's context the entry is held
// and the tail's join spec adds it, as the stage's own.

type heldEntry struct {
	name string
	args []any
}

// heldEntries are a tail's report entries, in the order they were added.
type heldEntries struct {
	mu      sync.Mutex
	entries []heldEntry
}

type heldEntriesKey struct{}

// holdEntries returns a context in which AddEntry holds entries in the
// returned list instead of adding them to the running spec.
func holdEntries(ctx context.Context) (context.Context, *heldEntries) {
	h := &heldEntries{}
	return context.WithValue(ctx, heldEntriesKey{}, h), h
}

// AddEntry adds a report entry to the running spec, or, in a tail's
// context, holds it for the tail's join spec.
func AddEntry(ctx context.Context, name string, args ...any) {
	if h, ok := ctx.Value(heldEntriesKey{}).(*heldEntries); ok {
		h.mu.Lock()
		h.entries = append(h.entries, heldEntry{name: name, args: args})
		h.mu.Unlock()
		return
	}
	AddReportEntry(name, args...)
}

// add adds the held entries to the running spec (the join spec).
func (h *heldEntries) add() {
	h.mu.Lock()
	es := h.entries
	h.entries = nil
	h.mu.Unlock()
	for _, e := range es {
		AddReportEntry(e.name, e.args...)
	}
}

// stepEntries is StepEntries through AddEntry, for code a tail may run.
func stepEntries(ctx context.Context, env *Env, stage string, steps []Step) {
	for _, s := range steps {
		env.Printf("[%s] step %-28s %6.1fs", stage, s.Name, s.Duration.Seconds())
		AddEntry(ctx, stage+"/"+s.Name, fmt.Sprintf("%.1fs", s.Duration.Seconds()), ReportEntryVisibilityNever)
	}
}
