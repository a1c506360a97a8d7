// Package move hands a Cluster API cluster over from one management cluster
// to another with `clusterctl move` (the clusterctl library), checked before
// and after: pre-checks (every Machine has a node, both API servers stay
// reachable), clusterctl's own discovery as a dry run, the move, and
// post-checks (the target has every object clusterctl moved, nothing of the
// cluster is left on the source, the target Cluster is not paused and no
// Machine was replaced).
package move

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/annotations"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/clusters"
	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/framework/wait"
)

// Timeouts of Move's steps, one config interval each, so every wait polls at
// its own rate; Discovery and Move do not poll.
type Timeouts struct {
	// PreCheck bounds the wait for every Machine to have a node.
	PreCheck wait.Interval
	// SettleBefore: both API servers must answer for its Timeout before the
	// move, checked every Poll.
	SettleBefore wait.Interval
	Discovery    wait.Interval
	Move         wait.Interval
	// PostCheck bounds the wait for the target to show every moved object.
	PostCheck wait.Interval
	// Reconcile bounds the wait, after the move, for the target's controllers to
	// report every Machine Running with a node and the Cluster Available again.
	Reconcile wait.Interval
	// SettleAfter: Machines (names, UIDs, provider IDs) must then stay unchanged
	// and the Cluster unpaused for its Timeout, checked every Poll.
	SettleAfter wait.Interval
}

func (t Timeouts) validate() []string {
	errs := wait.Timeouts{"PreCheck": t.PreCheck.Timeout, "Discovery": t.Discovery.Timeout, "Move": t.Move.Timeout,
		"PostCheck": t.PostCheck.Timeout, "Reconcile": t.Reconcile.Timeout}.Missing("Timeouts.")
	if t.SettleBefore.Timeout < 0 || t.SettleAfter.Timeout < 0 {
		errs = append(errs, "Timeouts.SettleBefore and SettleAfter must be >= 0")
	}
	return errs
}

// Input is the input of Move.
type Input struct {
	// FromKubeconfig is the cluster that holds the Cluster objects now (the
	// bootstrap cluster); ToKubeconfig the one that takes them over (for a
	// self-hosted management cluster, the moved cluster itself).
	FromKubeconfig string
	ToKubeconfig   string
	// Namespace and ClusterName of the Cluster to move. clusterctl moves every
	// Cluster in the namespace; the checks look at this one.
	Namespace            string
	ClusterName          string
	ClusterctlConfigPath string
	// State, if set, gets the moved cluster's resource updated: managed by the
	// target, self-hosted when the target is the cluster itself.
	State    *run.State
	Timeouts Timeouts
	// SourceWatch and TargetWatch: see PreCheckInput.
	SourceWatch, TargetWatch *kube.ReadyWatch
	// DeferSettle makes Move return once the post-check passed (every
	// object on the target, nothing left on the source, the Cluster
	// unpaused), leaving the reconcile wait and the settle period to
	// Result.Settle: the target's controllers run since before the move, so
	// it can serve the next cluster's creation, and the caller runs that
	// beside these checks instead of after them. The caller must run Settle
	// and treat its error as the move's.
	DeferSettle bool
	// Verbosity of clusterctl's log in Progress (0: its summary lines).
	Verbosity int
	Progress  io.Writer
	Prefix    string
}

func (in *Input) validate() error {
	var errs []string
	if in.FromKubeconfig == "" || in.ToKubeconfig == "" {
		errs = append(errs, "FromKubeconfig and ToKubeconfig are required")
	} else if in.FromKubeconfig == in.ToKubeconfig {
		errs = append(errs, "FromKubeconfig and ToKubeconfig are the same file")
	}
	if in.Namespace == "" || in.ClusterName == "" {
		errs = append(errs, "Namespace and ClusterName are required")
	}
	errs = append(errs, in.Timeouts.validate()...)
	if len(errs) > 0 {
		return fmt.Errorf("move.Move: invalid input: %s", strings.Join(errs, "; "))
	}
	return nil
}

// Result of Move.
type Result struct {
	// Inventory is clusterctl's discovery on the source before the move.
	Inventory *Inventory
	// Created and Deleted are the objects clusterctl created on the target and
	// deleted from the source during the move, per kind.
	Created map[string]int
	Deleted map[string]int
	// CreatedDiff lists per-kind differences between the dry run's move set and
	// what the move created (something changed on the source in between).
	CreatedDiff []string
	// Target counts, per kind, the moved objects found on the target afterwards.
	Target map[string]int
	// Diff lists per-kind differences between the move set and Target (empty when equal).
	Diff []string
	// KeptOnSource are moved objects clusterctl deliberately leaves on the
	// source (global or shared ones it does not delete).
	KeptOnSource []string
	// MachinesBefore on the source, MachinesAfter on the target after the settle period.
	MachinesBefore []clusters.Machine
	MachinesAfter  []clusters.Machine
	// Steps: pre-check, discovery, move, post-check, then reconcile and
	// settle-after (when deferred, Settle adds those two).
	Steps []wait.Step
	// Settle, set when Input.DeferSettle is, waits for the target to
	// reconcile the moved objects and runs the settle period: it fills
	// MachinesAfter and adds their steps. Nil when Move failed before it.
	Settle func(ctx context.Context) error
}

// Move runs pre-checks, clusterctl's discovery (dry run), `clusterctl move`
// and post-checks. On success the moved cluster's run-state resource says it
// is managed by the target.
//
// Cancelling ctx during the move itself returns at once, but clusterctl may
// have paused the source Cluster and created part of the objects on the
// target: the error says so; run the move again, or unpause the source.
func Move(ctx context.Context, in Input) (*Result, error) {
	if err := in.validate(); err != nil {
		return nil, err
	}
	res := &Result{}
	step := func(name string, start time.Time) {
		res.Steps = append(res.Steps, wait.Step{Name: name, Duration: time.Since(start)})
	}
	p := wait.Printer{W: in.Progress, Prefix: in.Prefix}
	from, err := kube.Connect(in.FromKubeconfig)
	if err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	to, err := kube.Connect(in.ToKubeconfig)
	if err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}

	start := time.Now()
	if res.MachinesBefore, err = PreCheck(ctx, PreCheckInput{Source: from, Target: to, Namespace: in.Namespace, ClusterName: in.ClusterName,
		Wait: in.Timeouts.PreCheck, Settle: in.Timeouts.SettleBefore, SourceWatch: in.SourceWatch, TargetWatch: in.TargetWatch,
		Progress: in.Progress, Prefix: in.Prefix}); err != nil {
		return res, err
	}
	step("pre-check", start)

	start = time.Now()
	if res.Inventory, err = Discover(ctx, DiscoverInput{FromKubeconfig: in.FromKubeconfig, Namespace: in.Namespace,
		ClusterctlConfigPath: in.ClusterctlConfigPath, Timeout: in.Timeouts.Discovery.Timeout}); err != nil {
		return res, err
	}
	step("discovery", start)
	for _, line := range strings.Split(res.Inventory.String(), "\n") {
		p.Printf("discovery: %s", line)
	}

	start = time.Now()
	rec := newRecorder()
	mctx, cancel := context.WithTimeout(ctx, in.Timeouts.Move.Timeout)
	defer cancel()
	if err := record(in.State, in.Namespace, in.ClusterName, moving(in.ToKubeconfig)); err != nil {
		return res, err
	}
	p.Printf("clusterctl move -n %s: %s -> %s", in.Namespace, in.FromKubeconfig, in.ToKubeconfig)
	err = clusterctlMove(mctx, kube.ClusterctlLog{Out: in.Progress, Prefix: in.Prefix, Verbosity: in.Verbosity, Observe: rec.observe},
		in.ClusterctlConfigPath, in.FromKubeconfig, in.ToKubeconfig, in.Namespace)
	res.Created, res.Deleted = countByKind(rec.created), countByKind(rec.deleted)
	if err != nil {
		return res, fmt.Errorf("clusterctl move of %s/%s (created %d of %d objects on the target, deleted %d from the source; "+
			"the source Cluster may be left paused: run the move again): %w",
			in.Namespace, in.ClusterName, len(rec.created), len(res.Inventory.Objects), len(rec.deleted), err)
	}
	step("move", start)
	if res.CreatedDiff = DiffCounts(res.Inventory.ToMove(), res.Created); len(res.CreatedDiff) > 0 {
		p.Printf("WARNING: the move created a different set than the dry run listed: %s", strings.Join(res.CreatedDiff, "; "))
	}
	p.Printf("moved: created %d objects on the target, deleted %d from the source in %s", len(rec.created), len(rec.deleted),
		time.Since(start).Round(100*time.Millisecond))

	if err := record(in.State, in.Namespace, in.ClusterName, moved(in.ToKubeconfig, in.Namespace, in.ClusterName)); err != nil {
		return res, err
	}

	start = time.Now()
	if err := PostCheck(ctx, PostCheckInput{Source: from, Target: to, Namespace: in.Namespace, ClusterName: in.ClusterName,
		Inventory: res.Inventory, Deleted: rec.deleted, Wait: in.Timeouts.PostCheck,
		Progress: in.Progress, Prefix: in.Prefix}, res); err != nil {
		return res, err
	}
	step("post-check", start)

	sin := SettleInput{Target: to, Namespace: in.Namespace, ClusterName: in.ClusterName,
		Before: res.MachinesBefore, Reconcile: in.Timeouts.Reconcile, Settle: in.Timeouts.SettleAfter,
		Progress: in.Progress, Prefix: in.Prefix}
	settle := func(ctx context.Context) error {
		start := time.Now()
		moved, err := Reconciled(ctx, sin)
		res.MachinesAfter = moved
		if err != nil {
			return err
		}
		step("reconcile", start)
		if in.Timeouts.SettleAfter.Timeout <= 0 {
			return nil
		}
		start = time.Now()
		after, err := Unchanged(ctx, sin, moved)
		if after != nil {
			res.MachinesAfter = after
		}
		if err == nil {
			step("settle-after", start)
		}
		return err
	}
	if in.DeferSettle {
		res.Settle = settle
		return res, nil
	}
	return res, settle(ctx)
}

// PreCheckInput is the input of PreCheck.
type PreCheckInput struct {
	Source, Target         *kube.Cluster
	Namespace, ClusterName string
	// Wait bounds and paces the wait for the Cluster's Machines to have nodes.
	Wait wait.Interval
	// Settle.Timeout is how long both API servers must keep answering,
	// checked every Settle.Poll.
	Settle wait.Interval
	// SourceWatch and TargetWatch, when both set, are /readyz polls of the
	// two clusters that began earlier (at Settle.Poll): the settle check then
	// needs Settle.Timeout of good answers in a row right up to now, which
	// the polls made while earlier work ran count towards, instead of
	// starting its window now.
	SourceWatch, TargetWatch *kube.ReadyWatch
	Progress                 io.Writer
	Prefix                   string
}

// PreCheck waits until the Cluster exists on the source, is not paused and
// every one of its Machines is Running with a NodeRef, then checks that both
// API servers answer /readyz throughout Settle. It returns the source Machines.
func PreCheck(ctx context.Context, in PreCheckInput) ([]clusters.Machine, error) {
	if in.Source == nil || in.Target == nil || in.Namespace == "" || in.ClusterName == "" || in.Wait.Timeout <= 0 {
		return nil, fmt.Errorf("move.PreCheck: invalid input: Source, Target, Namespace, ClusterName and Wait.Timeout are required")
	}
	var machines []clusters.Machine
	err := wait.For(ctx, wait.Options{What: fmt.Sprintf("every Machine of %s/%s Running with a node before the move", in.Namespace, in.ClusterName),
		Timeout: in.Wait.Timeout, Interval: in.Wait.Poll, Progress: in.Progress, Prefix: in.Prefix},
		func(ctx context.Context) (bool, string, error) {
			c := &clusterv1.Cluster{}
			if err := in.Source.Client.Get(ctx, client.ObjectKey{Namespace: in.Namespace, Name: in.ClusterName}, c); err != nil {
				if apierrors.IsNotFound(err) {
					return false, "", wait.Permanent(fmt.Errorf("Cluster %s/%s is not on the source", in.Namespace, in.ClusterName))
				}
				return false, "", err
			}
			if annotations.IsPaused(c, c) {
				return false, "", wait.Permanent(fmt.Errorf("Cluster %s/%s is paused on the source (clusterctl refuses to move a paused Cluster)", in.Namespace, in.ClusterName))
			}
			ms, err := clusters.Machines(ctx, in.Source.Client, in.Namespace, in.ClusterName)
			if err != nil {
				return false, "", err
			}
			machines = ms
			ok, state := clusters.MachinesSummary(ms, 1)
			return ok == len(ms) && len(ms) > 0, state, nil
		})
	if err != nil {
		return nil, err
	}
	settle := in.Settle.Timeout
	if settle <= 0 {
		return machines, nil
	}
	if in.SourceWatch != nil && in.TargetWatch != nil {
		return machines, answeredThroughout(ctx, in, settle)
	}
	deadline := time.Now().Add(settle)
	checks := 0
	err = wait.For(ctx, wait.Options{What: fmt.Sprintf("both API servers answering for %s", settle), Timeout: settle + time.Minute,
		Interval: in.Settle.Poll, Progress: in.Progress, Prefix: in.Prefix},
		func(ctx context.Context) (bool, string, error) {
			for name, c := range map[string]*kube.Cluster{"source": in.Source, "target": in.Target} {
				if err := c.Ready(ctx); err != nil {
					return false, "", wait.Permanent(fmt.Errorf("%s API server (%s) stopped answering after %d good checks: %w", name, c.Kubeconfig, checks, err))
				}
			}
			checks++
			return !time.Now().Before(deadline), fmt.Sprintf("%d checks of both API servers passed", checks), nil
		})
	return machines, err
}

// answeredThroughout waits until both watches have had settle of good
// answers in a row, up to a poll ago. A bad answer starts the window again:
// the move needs a quiet window right before it, not one at some time.
func answeredThroughout(ctx context.Context, in PreCheckInput, settle time.Duration) error {
	var last string
	defer func() {
		if last != "" {
			wait.Printer{W: in.Progress, Prefix: in.Prefix}.Printf("settle-before: %s", last)
		}
	}()
	return wait.For(ctx, wait.Options{What: fmt.Sprintf("both API servers answering every poll for the last %s", settle),
		Timeout: settle + time.Minute, Interval: in.Settle.Poll, Progress: in.Progress, Prefix: in.Prefix},
		func(ctx context.Context) (bool, string, error) {
			ok := true
			var states []string
			for _, w := range []struct {
				name  string
				watch *kube.ReadyWatch
			}{{"source", in.SourceWatch}, {"target", in.TargetWatch}} {
				st := w.watch.State()
				switch {
				case st.Polls == 0 || time.Since(st.Last) > st.Every+10*time.Second:
					ok = false
					states = append(states, fmt.Sprintf("%s: no recent answer (%d polls every %s)", w.name, st.Polls, st.Every))
				case st.Since.IsZero():
					ok = false
					states = append(states, fmt.Sprintf("%s: last answer bad: %v", w.name, st.LastErr))
				default:
					run := time.Since(st.Since)
					ok = ok && run >= settle
					s := fmt.Sprintf("%s answering for %s (%d polls every %s)", w.name, run.Round(time.Second), st.Good, st.Every)
					if !st.LastBad.IsZero() {
						s += fmt.Sprintf(", last bad answer %s ago: %v", time.Since(st.LastBad).Round(time.Second), st.LastErr)
					}
					states = append(states, s)
				}
			}
			if ok {
				last = fmt.Sprintf("both API servers answered every poll for the last %s: %s", settle, strings.Join(states, "; "))
			}
			return ok, strings.Join(states, "; "), nil
		})
}

// PostCheckInput is the input of PostCheck.
type PostCheckInput struct {
	Source, Target         *kube.Cluster
	Namespace, ClusterName string
	// Inventory from Discover before the move.
	Inventory *Inventory
	// Deleted are the objects clusterctl reported deleting from the source.
	Deleted []Object
	// Wait bounds and paces the wait for the moved objects on the target.
	Wait     wait.Interval
	Progress io.Writer
	Prefix   string
}

// PostCheck checks that every object of the move set exists on the target
// (per-kind counts equal to the discovery; the diff is reported), that none of
// the objects clusterctl deleted is still on the source and no Cluster or
// Machine of the cluster remains there, and that the target Cluster is not
// paused. It fills res.Target, res.Diff and res.KeptOnSource.
func PostCheck(ctx context.Context, in PostCheckInput, res *Result) error {
	if in.Source == nil || in.Target == nil || in.Inventory == nil || res == nil || in.Wait.Timeout <= 0 {
		return fmt.Errorf("move.PostCheck: invalid input: Source, Target, Inventory, a Result and Wait.Timeout are required")
	}
	toIdx, err := kindIndex(ctx, in.Target.Client)
	if err != nil {
		return err
	}
	fromIdx, err := kindIndex(ctx, in.Source.Client)
	if err != nil {
		return err
	}
	want := in.Inventory.ToMove()
	err = wait.For(ctx, wait.Options{What: "every moved object on the target", Timeout: in.Wait.Timeout, Interval: in.Wait.Poll,
		Progress: in.Progress, Prefix: in.Prefix},
		func(ctx context.Context) (bool, string, error) {
			var found []Object
			var missing []string
			for _, o := range in.Inventory.Objects {
				ok, err := lookup(ctx, in.Target.Client, toIdx, o)
				if err != nil {
					return false, "", err
				}
				if ok {
					found = append(found, o)
				} else {
					missing = append(missing, o.String())
				}
			}
			res.Target = countByKind(found)
			res.Diff = DiffCounts(want, res.Target)
			state := fmt.Sprintf("%d/%d moved objects on the target", len(found), len(in.Inventory.Objects))
			if len(missing) > 0 {
				state += "; missing: " + strings.Join(first(missing, 5), ", ")
			}
			return len(res.Diff) == 0, state, nil
		})
	if err != nil {
		return fmt.Errorf("%w (per-kind diff: %s)", err, strings.Join(res.Diff, "; "))
	}

	var left []string
	deleted := map[Object]bool{}
	for _, o := range in.Deleted {
		deleted[o] = true
	}
	for _, o := range in.Inventory.Objects {
		ok, err := lookup(ctx, in.Source.Client, fromIdx, o)
		if err != nil {
			return fmt.Errorf("checking the source for %s: %w", o, err)
		}
		switch {
		case ok && deleted[o]:
			left = append(left, o.String())
		case ok:
			res.KeptOnSource = append(res.KeptOnSource, o.String())
		}
	}
	cl := clusterv1.ClusterList{}
	if err := in.Source.Client.List(ctx, &cl, client.InNamespace(in.Namespace)); err != nil {
		return fmt.Errorf("listing Clusters on the source: %w", err)
	}
	for _, c := range cl.Items {
		if c.Name == in.ClusterName {
			left = append(left, "Cluster "+in.Namespace+"/"+c.Name)
		}
	}
	ms, err := clusters.Machines(ctx, in.Source.Client, in.Namespace, in.ClusterName)
	if err != nil {
		return err
	}
	for _, m := range ms {
		left = append(left, "Machine "+in.Namespace+"/"+m.Name)
	}
	if len(left) > 0 {
		return fmt.Errorf("after the move, objects of %s/%s are still on the source: %s", in.Namespace, in.ClusterName, strings.Join(left, ", "))
	}

	c := &clusterv1.Cluster{}
	if err := in.Target.Client.Get(ctx, client.ObjectKey{Namespace: in.Namespace, Name: in.ClusterName}, c); err != nil {
		return fmt.Errorf("reading Cluster %s/%s on the target: %w", in.Namespace, in.ClusterName, err)
	}
	if annotations.IsPaused(c, c) {
		return fmt.Errorf("Cluster %s/%s is still paused on the target after the move (%s)", in.Namespace, in.ClusterName, clusters.ClusterState(c))
	}
	return nil
}

// SettleInput is the input of Settle.
type SettleInput struct {
	Target                 *kube.Cluster
	Namespace, ClusterName string
	// Before are the Machines on the source before the move.
	Before []clusters.Machine
	// Reconcile bounds and paces the wait for the target's controllers to
	// report every Machine Running with a node and the Cluster Available
	// again: a moved object starts with an empty status.
	Reconcile wait.Interval
	// Settle.Timeout is how long the Machines must then stay unchanged,
	// checked every Settle.Poll.
	Settle   wait.Interval
	Progress io.Writer
	Prefix   string
	// Cause names what must not have replaced a Machine, in messages
	// ("the move" when empty; "clusterctl upgrade").
	Cause string
}

func (in SettleInput) cause() string {
	if in.Cause == "" {
		return "the move"
	}
	return in.Cause
}

// Settle checks that the move replaced no Machine: Reconciled, then
// Unchanged for in.Settle. It returns the target's Machines.
func Settle(ctx context.Context, in SettleInput) ([]clusters.Machine, error) {
	moved, err := Reconciled(ctx, in)
	if err != nil || in.Settle.Timeout <= 0 {
		return moved, err
	}
	after, err := Unchanged(ctx, in, moved)
	if after == nil {
		after = moved
	}
	return after, err
}

// Reconciled waits until the target shows the same Machine names and
// provider IDs the source had (in.Before), reports them Running with a node,
// and reports the Cluster Available and unpaused: a moved object starts with
// an empty status, so this is the target's controllers having taken over. It
// returns the target's Machines as last seen.
func Reconciled(ctx context.Context, in SettleInput) ([]clusters.Machine, error) {
	if in.Target == nil || in.Reconcile.Timeout <= 0 {
		return nil, fmt.Errorf("move.Reconciled: invalid input: Target and Reconcile.Timeout are required")
	}
	var last []clusters.Machine
	err := wait.For(ctx, wait.Options{What: fmt.Sprintf("target reporting the Machines of %s Running and the Cluster Available", in.ClusterName),
		Timeout: in.Reconcile.Timeout, Interval: in.Reconcile.Poll, Progress: in.Progress, Prefix: in.Prefix},
		func(ctx context.Context) (bool, string, error) {
			ms, running, state, c, err := checkTarget(ctx, in, in.Before, false)
			if ms != nil {
				last = ms
			}
			if err != nil {
				return false, state, err
			}
			return running && clusters.Available(c), state + "; Cluster " + clusters.ClusterState(c), nil
		})
	return last, err
}

// Unchanged checks that, for in.Settle.Timeout (polled every
// in.Settle.Poll), the target keeps exactly the moved Machines (names, UIDs
// and provider IDs), Running, with the Cluster unpaused. It returns the
// Machines as last seen (nil if never read).
func Unchanged(ctx context.Context, in SettleInput, moved []clusters.Machine) ([]clusters.Machine, error) {
	settle := in.Settle.Timeout
	if in.Target == nil || settle <= 0 || len(moved) == 0 {
		return nil, fmt.Errorf("move.Unchanged: invalid input: Target, Settle.Timeout and the moved Machines are required")
	}
	var last []clusters.Machine
	deadline := time.Now().Add(settle)
	err := wait.For(ctx, wait.Options{What: fmt.Sprintf("Machines of %s unchanged for %s after %s", in.ClusterName, settle, in.cause()),
		Timeout: settle + in.Reconcile.Timeout, Interval: in.Settle.Poll, Progress: in.Progress, Prefix: in.Prefix},
		func(ctx context.Context) (bool, string, error) {
			ms, running, state, _, err := checkTarget(ctx, in, moved, true)
			if ms != nil {
				last = ms
			}
			if err != nil {
				return false, state, err
			}
			return running && !time.Now().Before(deadline), state + "; names and UIDs unchanged", nil
		})
	return last, err
}

// checkTarget reads the target's Machines and Cluster once: a Machine set
// that differs from ref, or a paused Cluster, is a permanent error.
func checkTarget(ctx context.Context, in SettleInput, ref []clusters.Machine, sameUIDs bool) (ms []clusters.Machine, running bool, state string, c *clusterv1.Cluster, err error) {
	ms, err = clusters.Machines(ctx, in.Target.Client, in.Namespace, in.ClusterName)
	if err != nil {
		return nil, false, "", nil, err
	}
	if d := machineDiff(ref, ms, sameUIDs); d != "" {
		return ms, false, "", nil, wait.Permanent(fmt.Errorf("a Machine was replaced or changed by %s: %s", in.cause(), d))
	}
	c = &clusterv1.Cluster{}
	if err := in.Target.Client.Get(ctx, client.ObjectKey{Namespace: in.Namespace, Name: in.ClusterName}, c); err != nil {
		return ms, false, "", nil, err
	}
	if annotations.IsPaused(c, c) {
		return ms, false, "", nil, wait.Permanent(fmt.Errorf("Cluster %s is paused on the target after the move", in.ClusterName))
	}
	ok, state := clusters.MachinesSummary(ms, len(ref))
	return ms, ok == len(ms), state, c, nil
}

// machineDiff compares two Machine sets by name and provider ID, and by UID
// when sameUIDs (UIDs change by design when clusterctl recreates the objects
// on the target, so they are compared only on the same cluster).
func machineDiff(a, b []clusters.Machine, sameUIDs bool) string {
	am := map[string]clusters.Machine{}
	for _, m := range a {
		am[m.Name] = m
	}
	bm := map[string]clusters.Machine{}
	for _, m := range b {
		bm[m.Name] = m
	}
	var d []string
	for n, m := range am {
		o, ok := bm[n]
		switch {
		case !ok:
			d = append(d, "Machine "+n+" is gone")
		case m.ProviderID != o.ProviderID:
			d = append(d, fmt.Sprintf("Machine %s providerID %s -> %s", n, m.ProviderID, o.ProviderID))
		case sameUIDs && m.UID != o.UID:
			d = append(d, fmt.Sprintf("Machine %s UID %s -> %s (recreated)", n, m.UID, o.UID))
		}
	}
	for n := range bm {
		if _, ok := am[n]; !ok {
			d = append(d, "new Machine "+n)
		}
	}
	return strings.Join(d, "; ")
}

func first(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(s[:n:n], fmt.Sprintf("and %d more", len(s)-n))
}
