// Package suites holds the harness's stages as reusable Ginkgo specs, in
// Cluster API's style: XxxSpec(ctx, inputGetter) declares the spec, the
// input (explicit fields, hooks as func fields) is read through the getter
// when the spec runs and validated with a clear message.
//
// A stage is one file here: its Stage value (a stages.Definition plus the
// binding that builds the spec's input from the Env, and the cleanup of the
// resources it records) and its spec. The registry (registry.go) lists the
// stages in run order; the e2e entry points, `harness plan`, interval
// validation, failure classification and cleanup all read it.
package suites

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sync"

	"github.com/tkg-e2e/harness/framework/artifacts/report"
	"github.com/tkg-e2e/harness/framework/assert"
	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/infrastructure"
	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/redact"
	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/framework/vsphere"
)

// Env is what every stage spec shares: the loaded config, the run state, the
// artifacts folder, the redacted output, and the typed outputs of earlier
// stages (clusters, the vSphere session, reports). Build it with NewEnv.
type Env struct {
	Config *config.Config
	State  *run.State
	// Registry is the stage registry the run was built from.
	Registry *Registry
	// Provisioner makes, moves and deletes the run's clusters (driver:).
	Provisioner Provisioner
	// ArtifactFolder is the run's folder (artifacts/<run-id>); the state file lives there.
	ArtifactFolder string
	// KubeconfigDir holds the run's kubeconfigs, outside the artifacts folder
	// because they carry client keys and artifacts get uploaded.
	KubeconfigDir string
	// Out receives progress lines; it is GinkgoWriter behind the redactor.
	Out      io.Writer
	Redactor *redact.Redactor
	// Resume re-attaches to stages that passed in the kept run (RESUME=1).
	Resume bool
	// SkipCleanup keeps what the run created (SKIP_CLEANUP=1).
	SkipCleanup bool
	// External means the clusters were built by something else (make verify):
	// stages do not require the lifecycle stages to have passed, and nothing is cleaned up.
	External bool
	// ReadOnly keeps the checks from writing to the clusters (make verify
	// READ_ONLY=1): no smoke workload, no scratch namespace for the
	// admission probe. What that leaves out is reported as skipped.
	ReadOnly bool

	mu       sync.Mutex
	clusters map[string]*Cluster
	vsphere  *vsphere.Session
	reports  Reports
	// secrets the run handled that are not in the config (the vcsim
	// password), and all of them as they were before cleanup removed the
	// kubeconfigs, for the final artifacts scan.
	runSecrets, scanSecrets []string
	// collectedAtFailure: stages whose failure was already collected.
	collectedAtFailure map[string]bool
	closers            []closer
	// lease is the Boskos testbed the run holds (profile lease:), nil without one.
	lease *runLease
	// watches poll the API servers the move hands over between (watch.go).
	watches map[string]*kube.ReadyWatch
	// tails are the checks stages left running beside later stages (tail.go).
	tails map[string]*tail
}

// Reports are what the stages and the collectors leave for the run's reports.
type Reports struct {
	// PlacementHTML is the path of the placement matrix page, linked from index.html.
	PlacementHTML string
	// Conformance is the conformance stage's result for SUMMARY.md and index.html.
	Conformance *report.ConformanceResult
	// Findings of the final artifacts collection.
	Findings *Findings
}

// Cluster is a cluster of the run, by role: bootstrap, management, workload.
// It is the one handle stages pass around; Connect builds its clients.
type Cluster struct {
	// ID names the cluster in the run (config's ClusterIDs): "workload-2"
	// for a second workload cluster; empty when its role names it.
	ID         string
	Role       string
	Name       string
	Namespace  string
	Kubeconfig string
	// Infrastructure is where its nodes run: infrastructure.KindCluster
	// for the bootstrap cluster, the config's (CAPD, CAPV) for the clusters
	// the run creates, infrastructure.External for make verify's.
	Infrastructure infrastructure.Infrastructure

	once sync.Once
	kube *kube.Cluster
	err  error
}

// Connect returns the cluster's clients (built once, with the request
// timeout every wait needs).
func (c *Cluster) Connect() (*kube.Cluster, error) {
	c.once.Do(func() {
		c.kube, c.err = kube.Connect(c.Kubeconfig)
		if c.err != nil {
			c.err = fmt.Errorf("%s cluster %q: %w", c.Role, c.Name, c.err)
		}
	})
	return c.kube, c.err
}

// Key is the cluster's ID in the run: ID, or else its role.
func (c *Cluster) Key() string {
	if c.ID != "" {
		return c.ID
	}
	return c.Role
}

// DockerNodes reports whether the cluster's nodes are containers on this
// Docker host (kind, CAPD), where images are loaded and node logs read by exec.
func (c *Cluster) DockerNodes() bool {
	return c.Infrastructure != nil && c.Infrastructure.NodesAreContainers()
}

// Roles of the clusters of a run. The checked roles are the assertion
// engine's role registry (assert.Roles); the bootstrap cluster is never checked.
const (
	RoleBootstrap  = "bootstrap"
	RoleManagement = assert.Management
	RoleWorkload   = assert.Workload
	// RoleWindowsWorkload is only checked by make verify, given a kubeconfig.
	RoleWindowsWorkload = assert.WindowsWorkload
)

// SetCluster records a cluster the run can use.
func (e *Env) SetCluster(c *Cluster) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.clusters == nil {
		e.clusters = map[string]*Cluster{}
	}
	e.clusters[c.Key()] = c
}

// DropCluster forgets a cluster (the kind cluster after move).
func (e *Env) DropCluster(id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.clusters, id)
}

// Cluster returns the cluster of an ID (a role names the first cluster of
// it: "workload"), or nil.
func (e *Env) Cluster(id string) *Cluster {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.clusters[id]
}

// Clusters returns the live clusters of the run, in role order, and the
// clusters of one role in the order of their IDs.
func (e *Env) Clusters() []*Cluster {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []*Cluster
	for _, role := range append([]string{RoleBootstrap}, assert.Roles...) {
		var of []*Cluster
		for _, c := range e.clusters {
			if c.Role == role {
				of = append(of, c)
			}
		}
		slices.SortFunc(of, func(a, b *Cluster) int { return cmp.Compare(config.IDOrder(a.Key()), config.IDOrder(b.Key())) })
		out = append(out, of...)
	}
	return out
}

// Workloads returns the run's live workload clusters, the first first.
func (e *Env) Workloads() []*Cluster {
	var out []*Cluster
	for _, c := range e.Clusters() {
		if c.Role == RoleWorkload {
			out = append(out, c)
		}
	}
	return out
}

// SetVSphere records the run's vCenter session for later stages and the collectors.
func (e *Env) SetVSphere(s *vsphere.Session) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.vsphere = s
}

// VSphere returns the run's vCenter session, or nil when none was opened.
func (e *Env) VSphere() *vsphere.Session {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.vsphere
}

// UpdateReports changes the reports under the Env's lock.
func (e *Env) UpdateReports(f func(*Reports)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	f(&e.reports)
}

// Reports returns a copy of what the stages left for the reports.
func (e *Env) Reports() Reports {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.reports
}

// AddRunSecret registers a secret value the run handles that the config does
// not know (a simulator's password): masked in all output and scanned for in
// the artifacts at the end.
func (e *Env) AddRunSecret(v string) {
	e.Redactor.Add(v)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.runSecrets = append(e.runSecrets, v)
}

// firstFailure reports whether this is the first failure of stage, so
// collection at failure runs once per stage.
func (e *Env) firstFailure(stage string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.collectedAtFailure == nil {
		e.collectedAtFailure = map[string]bool{}
	}
	if e.collectedAtFailure[stage] {
		return false
	}
	e.collectedAtFailure[stage] = true
	return true
}

// Path returns a path inside the run's artifacts folder.
func (e *Env) Path(elem ...string) string {
	return filepath.Join(append([]string{e.ArtifactFolder}, elem...)...)
}

// KubeconfigPath is where the kubeconfig of a cluster of the run is kept.
func (e *Env) KubeconfigPath(cluster string) string {
	return filepath.Join(e.KubeconfigDir, cluster+".kubeconfig")
}

// ClusterctlConfig is the run-local clusterctl config file clusterctl reads
// for a cluster, by ID ("" for `clusterctl init` of the bootstrap cluster
// and for move): the profile's clusterctl.configPath with the variables for
// that cluster (config.ClusterctlVariables). NewEnv writes them.
func (e *Env) ClusterctlConfig(id string) string {
	name := "clusterctl.yaml"
	if id != "" {
		name = "clusterctl-" + id + ".yaml"
	}
	return filepath.Join(e.KubeconfigDir, name)
}

// Printf writes a progress line.
func (e *Env) Printf(format string, args ...any) {
	fmt.Fprintf(e.Out, format+"\n", args...)
}

// Interval returns the interval of one wait of a stage. The key must be one
// the stage's Definition registers, so config validation has checked it
// resolves; a key that is not registered is a harness bug and panics with
// what to fix.
func (e *Env) Interval(stage, key string) config.Interval {
	if !e.Registry.Registered(stage, key) {
		panic(fmt.Sprintf("interval %s/%s is not registered: add %q to the Intervals of %s's Definition", stage, key, key, stage))
	}
	return e.Config.MustInterval(stage, key)
}

// Validate checks what every stage needs.
func (e *Env) Validate() error {
	switch {
	case e == nil:
		return fmt.Errorf("suite Env is nil: the BeforeSuite that builds it did not run or failed")
	case e.Config == nil:
		return fmt.Errorf("Env.Config is nil: load the config in BeforeSuite (suites.NewEnv)")
	case e.State == nil:
		return fmt.Errorf("Env.State is nil: create or load the run state in BeforeSuite (suites.NewEnv)")
	case e.Registry == nil:
		return fmt.Errorf("Env.Registry is nil: build the Env with suites.NewEnv")
	case e.ArtifactFolder == "" || e.KubeconfigDir == "":
		return fmt.Errorf("Env.ArtifactFolder or Env.KubeconfigDir is empty: build the Env with suites.NewEnv")
	case e.Out == nil || e.Redactor == nil:
		return fmt.Errorf("Env.Out or Env.Redactor is nil: build the Env with suites.NewEnv")
	}
	return nil
}

// closer is something to release when the suite ends (vcsim, sessions).
type closer struct {
	name string
	fn   func(context.Context) error
}

// AddCloser registers fn to run at the end of the suite, after artifacts are
// collected, newest first.
func (e *Env) AddCloser(name string, fn func(context.Context) error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closers = append(e.closers, closer{name, fn})
}

// Close runs the closers, newest first, and returns their errors joined.
func (e *Env) Close(ctx context.Context) error {
	e.mu.Lock()
	cs := e.closers
	e.closers = nil
	e.mu.Unlock()
	var errs []error
	for i := len(cs) - 1; i >= 0; i-- {
		if err := cs[i].fn(ctx); err != nil {
			errs = append(errs, fmt.Errorf("closing %s: %w", cs[i].name, err))
		}
	}
	return errors.Join(errs...)
}
