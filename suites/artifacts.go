package suites

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/tkg-e2e/harness/framework/artifacts"
	"github.com/tkg-e2e/harness/framework/artifacts/cluster"
	"github.com/tkg-e2e/harness/framework/artifacts/report"
	vsphereartifacts "github.com/tkg-e2e/harness/framework/artifacts/vsphere"
	"github.com/tkg-e2e/harness/framework/vsphere"
)

// Env key of the findings of the latest collection.
const envFindings = "artifacts.findings"

type findings struct {
	clusters []artifacts.ClusterFindings
	vsphere  *artifacts.VSphereFindings
}

var collectedAtFailure sync.Map // stage -> bool

// CollectOnFailure collects every cluster of the run into
// at-failure/<stage>/ the first time a stage fails, while the clusters are as
// the failure left them (later stages and cleanup change them).
func CollectOnFailure(ctx context.Context, env *Env, spec types.SpecReport) {
	if env == nil || env.Config == nil || !spec.Failed() {
		return
	}
	stage := stageOf(spec)
	if _, done := collectedAtFailure.LoadOrStore(stage, true); done {
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
	env.Set(envFindings, f)
	env.Printf("[artifacts] collected %d cluster(s)%s in %.1fs", len(f.clusters), map[bool]string{true: " and vSphere", false: ""}[f.vsphere != nil], time.Since(start).Seconds())
}

func (e *Env) newWriter(root string) (*artifacts.Writer, error) {
	size := int64(artifacts.DefaultMaxFileSize)
	if e.Config != nil && e.Config.Artifacts.ByteSize() > 0 {
		size = e.Config.Artifacts.ByteSize()
	}
	return artifacts.New(artifacts.Options{Root: root, MaxFileSize: size, Redactor: e.Redactor})
}

func collect(ctx context.Context, env *Env, root string) (*findings, error) {
	w, err := env.newWriter(root)
	if err != nil {
		return nil, err
	}
	itemTimeout := env.Config.Artifacts.ItemTimeoutDuration()
	iv := env.Config.MustInterval("artifacts", "collect")
	ctx, cancel := context.WithTimeout(ctx, iv.Timeout)
	defer cancel()

	f := &findings{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, c := range env.Clusters() {
		wg.Add(1)
		go func(c *Cluster) {
			defer wg.Done()
			cf, err := cluster.Collect(ctx, w, cluster.Input{Name: c.Name, Role: c.Role, KubeconfigPath: c.Kubeconfig,
				DockerNodes: c.Provider == "kind" || c.Provider == "docker", ItemTimeout: itemTimeout, ExtraFiles: clusterLogs(env, c)})
			if err != nil {
				w.Fail("cluster "+c.Name, err)
				return
			}
			mu.Lock()
			f.clusters = append(f.clusters, cf)
			mu.Unlock()
		}(c)
	}
	if v, ok := env.Get(EnvVSphereSession); ok {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := v.(*vsphere.Session)
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
			f.vsphere = &vf
			mu.Unlock()
		}()
	}
	wg.Wait()
	if err := w.WriteIndex(); err != nil {
		return f, err
	}
	return f, nil
}

// clusterLogs are the harness's own per-cluster logs (clusterctl init, move)
// that go next to the cluster's collected files.
func clusterLogs(env *Env, c *Cluster) map[string]string {
	out := map[string]string{}
	matches, _ := filepath.Glob(env.Path("logs", c.Name+"-*.log"))
	for _, m := range matches {
		out[strings.TrimPrefix(filepath.Base(m), c.Name+"-")] = m
	}
	return out
}

// WriteReports writes SUMMARY.md, junit.xml, timings.json and index.html from
// Ginkgo's final report. It works whatever ran: after a failed BeforeSuite
// there is no state and no cluster, and the reports say why.
func WriteReports(_ context.Context, env *Env, suite types.Report) {
	if env == nil {
		return
	}
	w, err := env.newWriter(env.ArtifactFolder)
	if err != nil {
		fmt.Fprintf(os.Stderr, "artifacts: %v\n", err)
		return
	}
	in := report.Input{Suite: &suite, State: env.State}
	if env.State != nil {
		in.RunID, in.Profile = env.State.RunID, env.State.Profile
	}
	if v, ok := env.Get(envFindings); ok {
		f := v.(*findings)
		in.Clusters, in.VSphere = f.clusters, f.vsphere
	}
	if v, ok := env.Get(EnvPlacementHTML); ok {
		in.PlacementMatrixHTML = v.(string)
	}
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
	leaks, scanned, err := scanArtifacts(env)
	switch {
	case err != nil:
		fmt.Fprintf(os.Stderr, "artifacts: secret scan: %v\n", err)
	case len(leaks) > 0:
		var lines []string
		for _, l := range leaks {
			lines = append(lines, l.String())
		}
		Fail(fmt.Sprintf("secrets reached the artifacts folder (%d places):\n%s", len(leaks), strings.Join(lines, "\n")))
	default:
		fmt.Fprintf(os.Stdout, "artifacts: secret scan clean (%d secret values, every file under %s)\n", scanned, env.ArtifactFolder)
	}
	fmt.Fprintf(os.Stdout, "\nverdict %s (%s) — artifacts: %s\n", res.Verdict, res.Classification.Reason, env.ArtifactFolder)
	// The plain count line CI tooling reads.
	fmt.Fprintf(os.Stdout, "e2e: %d passed, %d failed, %d skipped\n", passed, failed, skipped)
}
