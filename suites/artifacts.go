package suites

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/tkg-e2e/harness/framework/artifacts"
	"github.com/tkg-e2e/harness/framework/artifacts/cluster"
	"github.com/tkg-e2e/harness/framework/artifacts/report"
	vsphereartifacts "github.com/tkg-e2e/harness/framework/artifacts/vsphere"
)

// Findings are what a collection found, for SUMMARY.md and index.html.
type Findings struct {
	Clusters []artifacts.ClusterFindings
	VSphere  *artifacts.VSphereFindings
}

// CollectOnFailure collects every cluster of the run into
// at-failure/<stage>/ the first time a stage fails, while the clusters are as
// the failure left them (later stages and cleanup change them).
func CollectOnFailure(ctx context.Context, env *Env, spec types.SpecReport) {
	if env == nil || env.Config == nil || !spec.Failed() {
		return
	}
	stage := stageOf(spec)
	if !env.firstFailure(stage) {
		return
	}
	root := env.Path("at-failure", stage)
	env.Printf("[artifacts] %s failed: collecting into %s", stage, root)
	if _, err := collect(ctx, env, root); err != nil {
		env.Printf("[artifacts] collection at failure: %v", err)
	}
}

func stageOf(spec types.SpecReport) string {
	if len(spec.ContainerHierarchyTexts) > 1 {
		return spec.ContainerHierarchyTexts[1]
	}
	return "suite"
}

// CollectAll collects every live cluster and the vSphere view into the run
// folder; the findings feed SUMMARY.md and index.html.
func CollectAll(ctx context.Context, env *Env) {
	if env == nil || env.Config == nil {
		return
	}
	start := time.Now()
	f, err := collect(ctx, env, env.ArtifactFolder)
	if err != nil {
		env.Printf("[artifacts] collection: %v", err)
		return
	}
	env.UpdateReports(func(r *Reports) { r.Findings = f })
	env.Printf("[artifacts] collected %d cluster(s)%s in %.1fs", len(f.Clusters), map[bool]string{true: " and vSphere", false: ""}[f.VSphere != nil], time.Since(start).Seconds())
}

func (r *Run) ArtifactWriter(root string) (*artifacts.Writer, error) {
	size := int64(artifacts.DefaultMaxFileSize)
	if r.Config != nil && r.Config.Artifacts.ByteSize() > 0 {
		size = r.Config.Artifacts.ByteSize()
	}
	return artifacts.New(artifacts.Options{Root: root, MaxFileSize: size, Redactor: r.Redactor})
}

func collect(ctx context.Context, env *Env, root string) (*Findings, error) {
	w, err := env.ArtifactWriter(root)
	if err != nil {
		return nil, err
	}
	itemTimeout := env.Config.Artifacts.ItemTimeoutDuration()
	iv := env.Interval(ScopeArtifacts, "collect")
	ctx, cancel := context.WithTimeout(ctx, iv.Timeout)
	defer cancel()

	f := &Findings{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	clusters := env.Clusters()
	for _, c := range clusters {
		wg.Add(1)
		go func(c *Cluster) {
			defer wg.Done()
			in := cluster.Input{Name: c.Name, Role: c.Role, KubeconfigPath: c.Kubeconfig,
				DockerNodes: c.DockerNodes(), ItemTimeout: itemTimeout}
			nodeSSHInput(env.Run, c, clusters, &in)
			cf, err := cluster.Collect(ctx, w, in)
			if err != nil {
				w.Fail("cluster "+c.Name, err)
				return
			}
			mu.Lock()
			f.Clusters = append(f.Clusters, cf)
			mu.Unlock()
		}(c)
	}
	s := env.VSphere()
	if s == nil && env.Config != nil && !env.Config.VSphere.Simulator && env.Config.VSphere.Server != "" {
		// The ova stage did not run (FOCUS=move): log in for the inventory,
		// tasks and events anyway; a failed login is a collection failure.
		var err error
		if s, err = vsphereSession(ctx, env, env.Interval(ScopeArtifacts, "connect")); err != nil {
			w.Fail("vsphere", err)
		}
	}
	if s != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var names []string
			for _, o := range env.Config.OVA.Images {
				names = append(names, o.Name)
			}
			vf, err := vsphereartifacts.Collect(ctx, w, vsphereartifacts.Input{Client: s.Vim(), Datacenter: env.Config.VSphere.Datacenter,
				VMFolder: env.Config.VSphere.Folder, TemplateNames: names, Since: env.State.Started, ItemTimeout: itemTimeout})
			if err != nil {
				w.Fail("vsphere", err)
				return
			}
			mu.Lock()
			f.VSphere = &vf
			mu.Unlock()
		}()
	}
	wg.Wait()
	if err := w.WriteIndex(); err != nil {
		return f, err
	}
	return f, nil
}

// nodeSSHInput sets how the node logs of a CAPV cluster are taken: over
// SSH with vsphere.nodeSSH (none set: the artifacts say how to set it), at
// the addresses of its Nodes, or of its Machines, which any cluster of the
// run may hold (the bootstrap cluster before the move, the management
// cluster after it and for the workload cluster).
func nodeSSHInput(env *Run, c *Cluster, clusters []*Cluster, in *cluster.Input) {
	if c.Infrastructure == nil || !c.Infrastructure.NodesInVCenter() {
		return
	}
	in.SSH = cluster.SSH{User: env.Config.VSphere.NodeSSH.User, KeyFile: env.Config.VSphere.NodeSSH.KeyFile}
	in.Namespace = c.Namespace
	for _, other := range clusters {
		if other.Kubeconfig != "" {
			in.MachineKubeconfigs = append(in.MachineKubeconfigs, other.Kubeconfig)
		}
	}
}

// WriteReports writes SUMMARY.md, junit.xml, timings.json and index.html from
// Ginkgo's final report. It works whatever ran: after a failed BeforeSuite
// there is no state and no cluster, and the reports say why.
func WriteReports(_ context.Context, env *Env, suite types.Report) {
	if env == nil {
		return
	}
	w, err := env.ArtifactWriter(env.ArtifactFolder)
	if err != nil {
		fmt.Fprintf(os.Stderr, "artifacts: %v\n", err)
		return
	}
	in := report.Input{Suite: &suite, State: env.State}
	if env.Registry != nil {
		in.StageCategory = env.Registry.Category
	}
	if env.State != nil {
		in.RunID, in.Profile = env.State.RunID, env.State.Profile
	}
	reps := env.Reports()
	if f := reps.Findings; f != nil {
		in.Clusters, in.VSphere = f.Clusters, f.VSphere
	}
	in.PlacementMatrixHTML = reps.PlacementHTML
	in.Conformance = reps.Conformance
	in.DayTwo = reps.DayTwo
	res, err := report.Write(w, in)
	if err != nil {
		fmt.Fprintf(os.Stderr, "artifacts: writing reports: %v\n", err)
	}
	passed, failed, skipped := 0, 0, 0
	for _, s := range suite.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt {
			continue
		}
		switch {
		case s.State.Is(types.SpecStatePassed):
			passed++
		case s.State.Is(types.SpecStateFailureStates):
			failed++
		case s.State.Is(types.SpecStateSkipped | types.SpecStatePending):
			skipped++
		}
	}
	// Every run proves its own artifacts hold no secret it handled.
	leaks, scanned, err := scanArtifacts(env.Run)
	switch {
	case err != nil || len(leaks) > 0:
		failf(env.Run, "%s", scanFailure(env.ArtifactFolder, leaks, err))
	default:
		fmt.Fprintf(os.Stdout, "artifacts: secret scan clean (%d secret values, every file under %s)\n", scanned, env.ArtifactFolder)
	}
	fmt.Fprintf(os.Stdout, "\nverdict %s (%s) — artifacts: %s\n", res.Verdict, res.Classification.Reason, env.ArtifactFolder)
	// The plain count line CI tooling reads.
	fmt.Fprintf(os.Stdout, "e2e: %d passed, %d failed, %d skipped\n", passed, failed, skipped)
}
