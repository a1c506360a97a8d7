package suites

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	capiclusterctl "sigs.k8s.io/cluster-api/test/framework/clusterctl"

	"github.com/tkg-e2e/harness/framework/cleanup"
	"github.com/tkg-e2e/harness/framework/clusters"
	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/infrastructure"
	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/node"
	"github.com/tkg-e2e/harness/framework/providers"
	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/framework/stages"
)

// ClusterSpecInput is the input of ClusterSpec: one Cluster API cluster of a
// role, created from the cluster that holds its Cluster object. Management
// and workload clusters take this same path; only the inputs differ.
type ClusterSpecInput struct {
	Env *Env
	// Stage is the stage name used for state, report entries and progress.
	Stage string
	// ID names the cluster in the run (management, workload, workload-2).
	ID string
	// Role is the cluster's role (management, workload).
	Role string
	// Holder is the cluster whose Cluster API creates this one (kind for the
	// management cluster, the management cluster for a workload cluster).
	Holder *Cluster
	// HolderRole names the holder's role, for the message when it is missing.
	HolderRole string
	Cluster    config.WorkloadCluster
	// Infrastructure is where the cluster's nodes run (with the provider
	// version clusterctl is given).
	Infrastructure         infrastructure.Infrastructure
	ClusterctlConfigPath   string
	CNIManifest            string
	KappControllerManifest string
	// Images are loaded into the cluster's nodes (docker provider only: other
	// providers' nodes pull).
	Images []capiclusterctl.ContainerImage
	// Providers, when set, are installed with `clusterctl init`: the cluster
	// becomes a management cluster that can take over with `clusterctl move`.
	Providers *providers.Providers
	// PostAddons runs once kapp-controller is Available (the local package set).
	PostAddons func(ctx context.Context, k *kube.Cluster) error
	// Timeouts are Provision's waits, one interval per wait.
	Timeouts clusters.ProvisionTimeouts
	// Preflight runs before anything is created (CAPV: the template to clone exists).
	Preflight func(ctx context.Context) error
	// Customize edits the generated objects before they are applied.
	Customize func(objs []*unstructured.Unstructured) error
	// StopAfter and StopReason: a rehearsal against a stand-in vCenter stops
	// the stage (status stopped) once the Machines are provisioned.
	StopAfter, StopReason string
}

// clusterIntervals are the interval keys of a cluster stage; management adds
// the provider keys.
var clusterIntervals = []string{"connect", "apply", "wait-api", "apply-cni", "wait-control-plane", "wait-machines", "wait-nodes",
	"wait-cluster", "load-images", "apply-kapp-controller", "wait-kapp-controller", "wait-kapp-apiservice", "install-packages"}

// clusterTimeouts maps a cluster stage's interval keys onto Provision's
// waits, one key per wait.
func clusterTimeouts(env *Run, stage string, management bool) clusters.ProvisionTimeouts {
	iv := func(k string) config.Interval { return env.Interval(stage, k) }
	t := clusters.ProvisionTimeouts{
		CreateTimeouts: clusters.CreateTimeouts{Apply: iv("apply"), APIReachable: iv("wait-api"), CNI: iv("apply-cni"),
			ControlPlaneInitialized: iv("wait-control-plane"), MachinesRunning: iv("wait-machines"), NodesReady: iv("wait-nodes"),
			ClusterAvailable: iv("wait-cluster")},
		LoadImages: iv("load-images"), KappControllerApply: iv("apply-kapp-controller"),
		KappControllerAvailable: iv("wait-kapp-controller"), KappControllerAPIService: iv("wait-kapp-apiservice"),
	}
	if management {
		t.ProvidersInit, t.ProvidersReady = iv("init-providers"), iv("wait-providers")
	}
	return t
}

// clusterStage is a stage that creates the Cluster API clusters of a role
// from the cluster of holderRole: the management cluster, which also gets
// the providers, or every workload cluster of the run, side by side.
func clusterStage(def stages.Definition, role, holderRole string) Stage {
	management := role == RoleManagement
	def.Kinds = []string{clusters.ResourceKind}
	def.Intervals = clusterIntervals
	if management {
		def.Intervals = append([]string{"init-providers", "wait-providers"}, clusterIntervals...)
	}
	cleanupOf := capiClusterCleanup
	if management {
		// One vCenter leak check covers every cluster of the run.
		cleanupOf = func(o CleanupOptions) StageCleanup {
			sc := capiClusterCleanup(o)
			if o.VSphere != nil {
				sc.LeakChecks = append(sc.LeakChecks, VCenterLeakCheck(o, clusters.ResourceKind))
			}
			return sc
		}
	}
	return Stage{Definition: def, Cleanup: cleanupOf,
		Spec: func(ctx context.Context, env func() *Env) {
			ClusterSpec(ctx, func() ClustersSpecInput {
				e := env()
				in := ClustersSpecInput{Env: e, Stage: def.Name}
				ids := []string{RoleManagement}
				if !management {
					ids = e.Config.WorkloadIDs()
				}
				for _, id := range ids {
					in.Clusters = append(in.Clusters, clusterInput(e, def.Name, id, holderRole, management))
				}
				return in
			})
		}}
}

// clusterInput is the input a cluster stage's binding builds from the Env
// for one cluster, by its ID.
func clusterInput(env *Env, stage, id, holderRole string, management bool) ClusterSpecInput {
	cfg := env.Config
	role := config.RoleOf(id)
	spec, _ := cfg.ClusterOf(id)
	in := ClusterSpecInput{Env: env, Stage: stage, ID: id, Role: role, Holder: env.Cluster(holderRole), HolderRole: holderRole, Cluster: spec,
		Infrastructure: cfg.Infrastructure(), ClusterctlConfigPath: env.ClusterctlConfig(id),
		CNIManifest: cfg.Addons.CNIManifest, KappControllerManifest: cfg.Addons.KappControllerManifest,
		Images: images(cfg, role), Timeouts: clusterTimeouts(env.Run, stage, management),
		StopAfter: cfg.Rehearsal.StopAfter, StopReason: cfg.Rehearsal.Reason}
	if cfg.UsesCAPV() {
		in.Customize = clusters.CAPVCustomize(cfg.VSphere.CustomVMXKeys, cfg.VSphere.PowerOffMode)
		if !cfg.VSphere.Simulator {
			tmpl, _ := cfg.TemplateFor(spec.KubernetesVersion)
			in.Preflight = func(ctx context.Context) error {
				s, err := vsphereSession(ctx, env, env.Interval(stage, "connect"))
				if err != nil {
					return err
				}
				if err := s.CheckTemplate(ctx, placementOf(cfg), tmpl); err != nil {
					return fmt.Errorf("CAPV would clone %s for the %s cluster: %w", tmpl, role, err)
				}
				return nil
			}
		}
	}
	if len(spec.TopologyVariables) > 0 {
		in.Customize = clusters.Chain(in.Customize, clusters.TopologyVariables(spec.TopologyVariables))
	}
	if t := cfg.Clusters.NodeDeletionTimeoutSeconds; t != nil {
		in.Customize = clusters.Chain(in.Customize, clusters.NodeDeletionTimeout(*t))
	}
	if management {
		p := providersOf(cfg)
		in.Providers = &p
	}
	if cfg.Packages.InstallLocalSet {
		install := env.Interval(stage, "install-packages")
		in.PostAddons = func(ctx context.Context, k *kube.Cluster) error {
			return installLocalPackages(ctx, env.Run, stage, k, install)
		}
	}
	return in
}

// capiClusterCleanup deletes Cluster API clusters through the cluster that
// manages them (or removes their node containers when it does not answer).
// On vSphere the management stage adds a leak check that asks vCenter for
// VMs of the run's clusters: the Docker leak checks cannot see them.
func capiClusterCleanup(o CleanupOptions) StageCleanup {
	return StageCleanup{Deleters: map[string]cleanup.Deleter{
		clusters.ResourceKind: clusters.DeleterWith(o.ClusterTimeout, o.Interval, o.Progress, o.Prefix, o.SelfHosted, o.Managed)},
		Independent: map[string]func(run.Resource) bool{clusters.ResourceKind: clusters.DeletesIndependently(o.SelfHosted, o.SelfHostedByID, o.Managed)},
		Together:    map[string]func(a, b run.Resource) bool{clusters.ResourceKind: clusters.DeletableTogether}}
}

// vcenterLeakCheck lists the VMs in the run's vCenter folder named after
// the run's clusters of these resource kinds ("nothing left" only when
// vCenter agrees).
func VCenterLeakCheck(o CleanupOptions, kinds ...string) cleanup.LeakCheck {
	return func(ctx context.Context, s *run.State) ([]string, string, error) {
		var names []string
		for n := range node.NamesOf(s, kinds...) {
			names = append(names, n)
		}
		sort.Strings(names)
		checked := fmt.Sprintf("vCenter folder %s: VMs named after %s", o.Placement.Folder, strings.Join(names, ", "))
		if len(names) == 0 {
			return nil, checked, nil
		}
		sess, err := o.VSphere(ctx)
		if err != nil {
			return nil, checked, fmt.Errorf("vCenter leak check: %w", err)
		}
		vms, err := sess.ClusterVMs(ctx, o.Placement, names)
		if err != nil {
			return nil, checked, fmt.Errorf("vCenter leak check: %w", err)
		}
		var leaks []string
		for _, vm := range withoutTemplates(vms) {
			leaks = append(leaks, fmt.Sprintf("VM %s (%s, %s, ip %s): govc vm.destroy -vm.ipath '%s/%s'",
				vm.Name, vm.Ref, vm.PowerState, dash(vm.IPAddress), o.Placement.Folder, vm.Name))
		}
		return leaks, checked, nil
	}
}

func (in ClusterSpecInput) problems() []string {
	return []string{Unless(in.Stage != "" && in.ID != "" && in.Role != "" && in.HolderRole != "", "Stage, ID, Role and HolderRole are required"),
		Unless(in.Cluster.Name != "" && in.Cluster.Namespace != "",
			fmt.Sprintf("the %s cluster's name and namespace are required (%s in the profile)", in.ID, config.ClusterKey(in.ID)))}
}

// ClustersSpecInput is the input of ClusterSpec: the clusters one stage
// creates, each from its holder (the management cluster; every workload
// cluster of the run).
type ClustersSpecInput struct {
	Env      *Env
	Stage    string
	Clusters []ClusterSpecInput
}

func (in ClustersSpecInput) StageOf() (*Env, string) { return in.Env, in.Stage }

func (in ClustersSpecInput) Validate() error {
	problems := []string{Unless(len(in.Clusters) > 0, "Clusters is empty: a cluster stage creates at least one cluster")}
	for _, c := range in.Clusters {
		problems = append(problems, c.problems()...)
	}
	return InputErrors(in.Env, problems...)
}

// ClusterSpec creates Cluster API clusters from their holder, side by side
// when there are several: for each, it waits for control plane, Machines,
// Nodes and Available, loads the images into its nodes, runs `clusterctl
// init` when it is to be a management cluster, and installs kapp-controller
// and the local package set, as TKG's cluster create does. With several,
// each cluster's steps and result are its own (state.json's stage record
// lists them), and one cluster's failure does not stop the others.
func ClusterSpec(_ context.Context, inputGetter func() ClustersSpecInput) {
	DeclareStage("creates the cluster and installs its providers and packages", inputGetter, func(input ClustersSpecInput) StageFuncs {
		env := input.Env
		return StageFuncs{
			Run: func(ctx context.Context) error {
				var jobs []clusterJob
				for _, c := range input.Clusters {
					jobs = append(jobs, clusterJob{ID: c.ID, Name: c.Cluster.Name,
						Run: func(ctx context.Context) ([]Step, error) { return createCluster(ctx, env, c) }})
				}
				return eachCluster(ctx, env, input.Stage, jobs)
			},
			Reattach: func(ctx context.Context) error {
				var errs []error
				for _, c := range input.Clusters {
					errs = append(errs, attachCluster(ctx, env, c.ID))
				}
				return errors.Join(errs...)
			},
		}
	})
}

// createCluster makes one cluster of a cluster stage.
func createCluster(ctx context.Context, env *Env, in ClusterSpecInput) ([]Step, error) {
	if in.Holder == nil {
		return nil, ErrNoCluster(in.HolderRole)
	}
	if in.Preflight != nil {
		if err := in.Preflight(ctx); err != nil {
			return nil, fmt.Errorf("before creating the %s cluster: %w", in.ID, err)
		}
	}
	return provision(ctx, env, in)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
