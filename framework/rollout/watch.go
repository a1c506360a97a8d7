package rollout

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/wait"
)

// Want is what a cluster's Machines settle at: per pool, how many Machines
// (none of them deleting), every one Ready with a Node, at Version when it
// is set, and the named Machines gone.
type Want struct {
	Pools   map[string]int
	Version string
	Gone    []string
}

// WatchInput is the input of Watch.
type WatchInput struct {
	// Client reads the Machines: the cluster's management cluster.
	Client             client.Client
	Cluster, Namespace string
	Want               Want
	// What is the wait's description ("upgrade of default/wl to v1.33.1").
	What string
	// Change, if set, makes the change once the watch has seen the
	// Machines that exist before it (so they count as Existed).
	Change func(ctx context.Context) error
	// Observed, if set, is told every poll's Timeline (the run records new
	// Machines' containers as they appear, so an interrupted run cleans
	// them up); its error is retried like a failed poll.
	Observed func(ctx context.Context, t *Timeline) error
	// StuckIf, if set, says why the Machines cannot get to Want by
	// themselves (empty: they can). The wait then ends after its grace
	// with that cause instead of at its timeout.
	StuckIf  func(ms []clusterv1.Machine) string
	Interval wait.Interval
	Progress io.Writer
	Prefix   string
}

func (in WatchInput) validate() error {
	var p []string
	if in.Client == nil || in.Cluster == "" || in.Namespace == "" || in.What == "" {
		p = append(p, "Client, Cluster, Namespace and What are required")
	}
	if len(in.Want.Pools) == 0 {
		p = append(p, "Want.Pools is empty: say how many Machines each pool settles at")
	}
	if in.Interval.Timeout <= 0 {
		p = append(p, "Interval.Timeout must be > 0 (from the stage's interval key)")
	}
	if len(p) > 0 {
		return fmt.Errorf("rollout.Watch: %s", strings.Join(p, "; "))
	}
	return nil
}

// Watch records the cluster's Machines, makes the change, and polls until
// they settle at Want. The Timeline comes back either way; on a timeout the
// error names every Machine that is not where Want says, with its
// conditions.
func Watch(ctx context.Context, in WatchInput) (*Timeline, error) {
	if err := in.validate(); err != nil {
		return nil, err
	}
	t := newTimeline(time.Now())
	ms, err := machines(ctx, in)
	if err != nil {
		return t, err
	}
	t.observe(time.Now(), ms, true)
	if in.Change != nil {
		if err := in.Change(ctx); err != nil {
			return t, err
		}
	}
	err = wait.For(ctx, wait.Options{What: in.What, Timeout: in.Interval.Timeout, Interval: in.Interval.Poll, Grace: in.Interval.Grace,
		Progress: in.Progress, Prefix: in.Prefix}, func(ctx context.Context) (bool, string, error) {
		ms, err := machines(ctx, in)
		if err != nil {
			return false, "", err
		}
		t.observe(time.Now(), ms, false)
		if in.Observed != nil {
			if err := in.Observed(ctx, t); err != nil {
				return false, "", err
			}
		}
		off := unsettled(t, in.Want)
		if len(off) == 0 {
			return true, fmt.Sprintf("%d Machines settled", len(t.Alive())), nil
		}
		if in.StuckIf != nil {
			if cause := in.StuckIf(ms); cause != "" {
				return false, strings.Join(off, "; "), wait.Stuck(cause)
			}
		}
		return false, strings.Join(off, "; "), nil
	})
	return t, err
}

func machines(ctx context.Context, in WatchInput) ([]clusterv1.Machine, error) {
	var l clusterv1.MachineList
	if err := in.Client.List(ctx, &l, client.InNamespace(in.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: in.Cluster}); err != nil {
		return nil, fmt.Errorf("listing the Machines of %s/%s: %w", in.Namespace, in.Cluster, err)
	}
	return l.Items, nil
}

// unsettled says what keeps the Machines from Want, one entry per pool or
// Machine, empty when they are there.
func unsettled(t *Timeline, w Want) []string {
	var off []string
	alive := map[string][]*Machine{}
	for _, m := range t.Alive() {
		alive[m.Pool] = append(alive[m.Pool], m)
	}
	pools := make([]string, 0, len(w.Pools))
	for p := range w.Pools {
		pools = append(pools, p)
	}
	sort.Strings(pools)
	for _, p := range pools {
		if n := len(alive[p]); n != w.Pools[p] {
			off = append(off, fmt.Sprintf("%s has %d Machines, want %d", p, n, w.Pools[p]))
		}
		for _, m := range alive[p] {
			switch {
			case w.Version != "" && m.Version != w.Version:
				off = append(off, "still at "+m.Version+": "+m.describe())
			case m.Ready.IsZero():
				off = append(off, "not Ready: "+m.describe())
			}
		}
	}
	for _, name := range w.Gone {
		for _, m := range t.Alive() {
			if m.Name == name {
				off = append(off, "not replaced: "+m.describe())
			}
		}
	}
	return off
}

// NotRemediated is a StuckIf for a remediation: the named Machine is not
// Ready, but carries an annotation that makes every MachineHealthCheck pass
// it over (skip-remediation, or paused), so nothing will replace it.
func NotRemediated(name string) func(ms []clusterv1.Machine) string {
	return func(ms []clusterv1.Machine) string {
		for _, m := range ms {
			if m.Name != name {
				continue
			}
			var skip string
			for _, a := range []string{clusterv1.MachineSkipRemediationAnnotation, clusterv1.PausedAnnotation} {
				if _, ok := m.Annotations[a]; ok {
					skip = a
				}
			}
			if skip == "" {
				return ""
			}
			for _, c := range m.Status.Conditions {
				if c.Type == clusterv1.MachineReadyCondition && c.Status != metav1.ConditionTrue {
					return fmt.Sprintf("Machine %s is not Ready (Ready=%s, %s) and is annotated %s, which every MachineHealthCheck passes over: nothing will replace it",
						name, c.Status, c.Reason, skip)
				}
			}
		}
		return ""
	}
}

// CheckRollingOrder checks a rollout against what the rollout strategies
// promise: the control plane is replaced before any worker (a worker
// Machine created before the last old control plane Machine was gone means
// the MachineDeployments did not wait for it), and no pool ever had more
// than want+1 Machines (maxSurge 1: one at a time). slack covers the poll
// interval and the creationTimestamp's second resolution.
func CheckRollingOrder(t *Timeline, want map[string]int, slack time.Duration) error {
	var errs []error
	var lastCPGone time.Time
	for _, m := range t.Machines {
		if m.Existed && m.Pool == ControlPlanePool && m.Gone.After(lastCPGone) {
			lastCPGone = m.Gone
		}
	}
	for _, m := range t.New() {
		if m.Pool != ControlPlanePool && !lastCPGone.IsZero() && m.Created.Add(slack).Before(lastCPGone) {
			errs = append(errs, fmt.Errorf("worker Machine %s was created %.0fs before the last old control plane Machine was gone: the control plane is upgraded first",
				m.Name, lastCPGone.Sub(m.Created).Seconds()))
		}
	}
	for p, n := range want {
		if got := t.MaxAlive[p]; got > n+1 {
			errs = append(errs, fmt.Errorf("%s had %d Machines at once, want at most %d (one at a time: maxSurge 1)", p, got, n+1))
		}
	}
	return errors.Join(errs...)
}
