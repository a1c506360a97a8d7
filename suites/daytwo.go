package suites

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiclusterctl "sigs.k8s.io/cluster-api/test/framework/clusterctl"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/artifacts/report"
	"github.com/tkg-e2e/harness/framework/assert"
	"github.com/tkg-e2e/harness/framework/clusters"
	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/node"
	"github.com/tkg-e2e/harness/framework/probe"
	"github.com/tkg-e2e/harness/framework/rollout"
)

// watchMachines makes a day-two change and watches the cluster's Machines
// settle. Want.Pools, when unset, is the cluster's pools as they are before
// the change (control plane and MachineDeployments at their replicas). New
// CAPD nodes get the profile's images as their containers appear: offline
// nothing else would give them the images their pods need.
// machineWatch is one day-two change and what its Machines settle at.
type machineWatch struct {
	Want     rollout.Want
	Change   func(ctx context.Context) error
	What     string
	Interval config.Interval
	// Images are loaded into new nodes beside the profile's for the role.
	Images  []capiclusterctl.ContainerImage
	StuckIf func(ms []clusterv1.Machine) string
}

func watchMachines(ctx context.Context, env *Env, stage string, c, holder *Cluster, mw machineWatch) (*rollout.Timeline, error) {
	want, iv := mw.Want, mw.Interval
	hk, err := holder.Connect()
	if err != nil {
		return nil, err
	}
	mgmt := hk.Client
	if want.Pools == nil {
		pools, err := machinePools(ctx, mgmt, c)
		if err != nil {
			return nil, err
		}
		want.Pools = pools
	}
	var pre *node.Preload
	if c.DockerNodes() {
		// mw.Images first: a new node of an upgrade is not Ready without
		// them (kube-proxy of both versions), and the preload imports in
		// order, a dozen management images taking a minute or more.
		if imgs := append(slices.Clone(mw.Images), images(env.Config, c.Role)...); len(imgs) > 0 {
			load := env.Interval(stage, "load-images")
			pre = node.StartPreload(ctx, node.LoadImagesInput{ClusterName: c.Name, Images: imgs, Timeout: load.Timeout,
				Progress: env.Out, Prefix: "[" + stage + "]"}, load.Poll)
		}
	}
	start := time.Now()
	tl, err := rollout.Watch(ctx, rollout.WatchInput{Client: mgmt, Cluster: c.Name, Namespace: c.Namespace, Want: want, What: mw.What,
		Change: mw.Change, Observed: recordNewContainers(env, c, holder), StuckIf: mw.StuckIf, Interval: iv, Progress: env.Out,
		Prefix: "[" + stage + "]"})
	steps := []Step{{Name: "rollout", Duration: time.Since(start)}}
	if pre != nil {
		if err == nil {
			t := time.Now()
			_, lerr := pre.Finish(ctx)
			steps = append(steps, Step{Name: "load-images", Duration: time.Since(t)})
			err = lerr
		} else {
			pre.Stop()
		}
	}
	stepEntries(ctx, env, stage, steps)
	return tl, err
}

// recordNewContainers records the containers of Machines a day-two change
// made, as the cluster stage records the first ones: cleanup removes a
// run's containers by recorded ID, and one it did not record is not the
// run's (a replaced worker would be left behind).
func recordNewContainers(env *Env, c, holder *Cluster) func(ctx context.Context, t *rollout.Timeline) error {
	if !c.DockerNodes() {
		return nil
	}
	return func(ctx context.Context, t *rollout.Timeline) error {
		r, ok := env.State.Resource(clusters.ResourceKind, c.Name)
		if !ok {
			return nil
		}
		have := map[string]bool{}
		for _, name := range node.Recorded(r) {
			have[name] = true
		}
		var missing []clusters.Machine
		for _, m := range t.New() {
			if m.Gone.IsZero() && !have[clusters.MachineContainerName(c.Name, m.Name)] {
				missing = append(missing, clusters.Machine{Name: m.Name, NodeName: m.Node})
			}
		}
		if len(missing) == 0 {
			return nil
		}
		hk, err := holder.Connect()
		if err != nil {
			return err
		}
		return clusters.RecordContainers(ctx, hk, holder.Kubeconfig, env.State, c.Namespace, c.Name, missing, true)
	}
}

// machinePools are the Machines a cluster has when it is settled: its
// control plane replicas and each MachineDeployment's.
func machinePools(ctx context.Context, mgmt client.Client, c *Cluster) (map[string]int, error) {
	var cl clusterv1.Cluster
	if err := mgmt.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: c.Name}, &cl); err != nil {
		return nil, fmt.Errorf("reading Cluster %s/%s: %w", c.Namespace, c.Name, err)
	}
	pools := map[string]int{}
	if r := cl.Spec.Topology.ControlPlane.Replicas; r != nil {
		pools[rollout.ControlPlanePool] = int(*r)
	}
	var mds clusterv1.MachineDeploymentList
	if err := mgmt.List(ctx, &mds, client.InNamespace(c.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: c.Name}); err != nil {
		return nil, fmt.Errorf("listing the MachineDeployments of %s/%s: %w", c.Namespace, c.Name, err)
	}
	for _, md := range mds.Items {
		if md.Spec.Replicas != nil {
			pools[md.Name] = int(*md.Spec.Replicas)
		}
	}
	if pools[rollout.ControlPlanePool] == 0 {
		return nil, fmt.Errorf("cluster %s/%s has no control plane replicas in its topology: day-two stages need a ClusterClass cluster", c.Namespace, c.Name)
	}
	return pools, nil
}

// dayTwoReport is a day-two stage's timeline: every Machine's replacement
// and every probe's outage windows, as <stage>.md, a report entry
// (SUMMARY.md, JUnit) and steps (timings).
type dayTwoReport struct {
	Title    string
	Timeline *rollout.Timeline
	Probes   []probe.Result
	// Notes are facts of the stage listed before the Machines (provider
	// versions before and after, what was checked).
	Notes []string
}

func (r dayTwoReport) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n", r.Title)
	if len(r.Probes) > 0 {
		b.WriteString("| probe | outage | windows | polls | failed |\n|---|---:|---|---:|---:|\n")
		for _, p := range r.Probes {
			fmt.Fprintf(&b, "| %s | %.1fs | %s | %d | %d |\n", p.Name, p.Total().Seconds(), dashIfEmpty(strings.Join(p.WindowList(), "<br>")), p.Polls, p.Failures)
		}
		b.WriteString("\n")
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "- %s\n", n)
	}
	if len(r.Notes) > 0 {
		b.WriteString("\n")
	}
	if t := r.Timeline; t != nil {
		fmt.Fprintf(&b, "Machines, over %.0fs:\n\n", t.End.Sub(t.Start).Seconds())
		for _, e := range t.Events() {
			fmt.Fprintf(&b, "- %s\n", e)
		}
	}
	return b.String()
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func (r dayTwoReport) write(ctx context.Context, env *Env, stage string) {
	md := r.markdown()
	if w, err := env.ArtifactWriter(env.ArtifactFolder); err == nil {
		if err := w.WriteFile(stage+".md", []byte(md)); err != nil {
			env.Printf("[%s] writing %s.md: %v", stage, stage, err)
		}
	}
	var steps []Step
	res := report.DayTwoResult{Stage: stage, Title: r.Title, Report: stage + ".md", Notes: r.Notes}
	for _, p := range r.Probes {
		env.Printf("[%s] %s", stage, p.Summary())
		res.Probes = append(res.Probes, p.Summary())
		for _, w := range p.WindowList() {
			env.Printf("[%s]   outage %s", stage, w)
			res.Probes = append(res.Probes, "outage "+w)
		}
		steps = append(steps, Step{Name: "outage " + p.Name, Duration: p.Total()})
	}
	if r.Timeline != nil {
		for _, e := range r.Timeline.Events() {
			res.Events = append(res.Events, e.String())
		}
	}
	env.UpdateReports(func(rs *Reports) { rs.DayTwo = append(rs.DayTwo, res) })
	stepEntries(ctx, env, stage, steps)
	AddEntry(ctx, stage+" timeline", md)
}

// recheckIntervals are the interval keys recheck reads under the day-two
// stage's name (with the default/ fallback).
var recheckIntervals = []string{"wait-healthy", "smoke", "wait-pods", "wait-reconcile"}

// RecheckInput says which day-one checks run again on a cluster a day-two
// stage changed.
type RecheckInput struct {
	Env   *Env
	Stage string
	// Checks are assertion stages (health, placement, packages).
	Checks []Stage
	// Smoke, if set, runs the smoke workload too.
	Smoke *SmokeSpecInput
}

func recheckInput(e *Env, stage string) RecheckInput {
	return RecheckInput{Env: e, Stage: stage, Checks: []Stage{Health, Placement, Packages},
		Smoke: &SmokeSpecInput{Env: e, Image: e.Config.Smoke.Image, Wait: e.Interval(stage, "smoke")}}
}

// recheck runs health, smoke, placement and packages again on the clusters
// a stage changed, one page per check covering them all under
// <artifacts>/<stage>/, every failure reported.
func recheck(ctx context.Context, in RecheckInput, cs ...*Cluster) error {
	env := in.Env
	var target []assert.Target
	for _, c := range cs {
		k, err := c.Connect()
		if err != nil {
			return err
		}
		target = append(target, assert.Target{Role: c.Role, Name: c.Name, Namespace: c.Namespace, Cluster: k})
	}
	w, err := env.ArtifactWriter(filepath.Join(env.ArtifactFolder, in.Stage))
	if err != nil {
		return err
	}
	var errs []error
	for _, s := range in.Checks {
		start := time.Now()
		check, err := s.Assertion(env)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		iv := env.Interval(in.Stage, s.Intervals[0])
		out, err := assert.Run(ctx, check, target, w, assert.Options{Timeout: iv.Timeout, Interval: iv.Poll, Grace: iv.Grace,
			Redactor: env.Redactor, Progress: env.Out, Prefix: "[" + in.Stage + "/" + s.Name + "]"})
		stepEntries(ctx, env, in.Stage, []Step{{Name: "recheck " + s.Name, Duration: time.Since(start)}})
		if err != nil {
			errs = append(errs, fmt.Errorf("%s again: %w", s.Name, err))
			continue
		}
		AddEntry(ctx, in.Stage+" "+s.Name, out.Markdown)
		if err := out.Err(); err != nil {
			errs = append(errs, fmt.Errorf("%s again, after %s: %w", s.Name, in.Stage, err))
		}
	}
	if in.Smoke == nil {
		return errors.Join(errs...)
	}
	for _, c := range cs {
		start := time.Now()
		entry, md, err := smokeCluster(ctx, *in.Smoke, c)
		stepEntries(ctx, env, in.Stage, []Step{{Name: "recheck smoke", Duration: time.Since(start)}})
		if entry != "" {
			AddEntry(ctx, in.Stage+" "+entry, md)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("smoke again on %s, after %s: %w", c.Name, in.Stage, err))
		}
	}
	return errors.Join(errs...)
}
