package suites

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	capiclusterctl "sigs.k8s.io/cluster-api/test/framework/clusterctl"

	"github.com/tkg-e2e/harness/framework/clusters"
	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/kind"
	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/packages"
	"github.com/tkg-e2e/harness/framework/providers"
	"github.com/tkg-e2e/harness/framework/wait"
)

// KubeconfigDir is where the run's kubeconfigs live: outside the artifacts
// folder, because they hold client keys and artifacts get uploaded.
func KubeconfigDir(env *Env) string {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "tkg-e2e", env.State.RunID)
}

func kubeconfigPath(env *Env, name string) string {
	return filepath.Join(KubeconfigDir(env), name+".kubeconfig")
}

func images(cfg *config.Config) []capiclusterctl.ContainerImage {
	var out []capiclusterctl.ContainerImage
	for _, img := range cfg.Images {
		out = append(out, capiclusterctl.ContainerImage{Name: img.Name, LoadBehavior: capiclusterctl.LoadImageBehavior(img.LoadBehavior)})
	}
	return out
}

func clusterctlProviders(cfg *config.Config) providers.Providers {
	cc := cfg.Clusterctl
	return providers.Providers{Core: cc.CoreProvider, Bootstrap: cc.BootstrapProviders,
		ControlPlane: cc.ControlPlaneProviders, Infrastructure: cc.InfrastructureProviders}
}

func infraProvider(cfg *config.Config) string {
	if len(cfg.Clusterctl.InfrastructureProviders) > 0 {
		return cfg.Clusterctl.InfrastructureProviders[0]
	}
	return ""
}

// createTimeouts maps a stage's intervals onto a cluster create.
func createTimeouts(cfg *config.Config, stage string) clusters.CreateTimeouts {
	iv := func(k string) config.Interval { return cfg.MustInterval(stage, k) }
	return clusters.CreateTimeouts{
		Apply: iv("apply").Timeout, APIReachable: iv("wait-control-plane").Timeout, CNI: iv("apply").Timeout,
		ControlPlaneInitialized: iv("wait-control-plane").Timeout, MachinesRunning: iv("wait-machines").Timeout,
		NodesReady: iv("wait-nodes").Timeout, ClusterAvailable: iv("wait-cluster").Timeout, Interval: iv("wait-machines").Poll,
	}
}

// createCluster provisions a Cluster API cluster of a role from the cluster
// that manages it (images into CAPD nodes, `clusterctl init` for the
// management cluster, kapp-controller and the local package set when the
// config asks, so the packages stage has something real to check), and
// records it in Env.
func createCluster(ctx context.Context, env *Env, role string, spec config.WorkloadCluster, stage string, holder *Cluster) (*clusters.Cluster, error) {
	cfg := env.Config
	iv := func(k string) config.Interval { return cfg.MustInterval(stage, k) }
	t := clusters.ProvisionTimeouts{CreateTimeouts: createTimeouts(cfg, stage), LoadImages: iv("apply").Timeout,
		KappControllerApply: iv("apply").Timeout, KappControllerAvailable: iv("wait-kapp-controller").Timeout,
		KappControllerAPIService: iv("wait-kapp-controller").Timeout}
	if role == RoleManagement {
		ctrl := iv("wait-controllers")
		t.LoadImages, t.ProvidersInit, t.ProvidersReady = ctrl.Timeout, ctrl.Timeout, ctrl.Timeout
	}
	res, err := clusters.Provision(ctx, clusters.ProvisionInput{CreateInput: clusters.CreateInput{
		Spec: clusters.Spec{Name: spec.Name, Namespace: spec.Namespace, KubernetesVersion: spec.KubernetesVersion, Flavor: spec.Flavor,
			InfrastructureProvider: infraProvider(cfg), ControlPlaneMachineCount: int64(spec.ControlPlaneMachineCount),
			WorkerMachineCount: int64(spec.WorkerMachineCount)},
		Role: role, ManagementKubeconfig: holder.Kubeconfig, ClusterctlConfigPath: cfg.Clusterctl.ConfigPath,
		CNIManifest: cfg.Addons.CNIManifest, KubeconfigPath: kubeconfigPath(env, spec.Name),
		State: env.State, CreatedBy: stage, Progress: env.Out, Prefix: "[" + stage + "]",
	}, Images: images(cfg), Providers: clusterctlProviders(cfg), KappControllerManifest: cfg.Addons.KappControllerManifest,
		PostAddons: func(ctx context.Context, k *kube.Cluster) error { return installLocalPackages(ctx, env, stage, k) },
		Timeouts:   t})
	if res != nil {
		reportSteps(env, stage, res.Steps)
	}
	if err != nil {
		return nil, err
	}
	env.SetCluster(&Cluster{Role: role, Name: spec.Name, Namespace: spec.Namespace, Kubeconfig: res.Cluster.KubeconfigPath, Provider: infraProvider(cfg)})
	return res.Cluster, nil
}

// attachCluster re-attaches to a cluster a kept run recorded, checking that
// its API answers.
func attachCluster(ctx context.Context, env *Env, role string) error {
	r, ok := env.State.Resource(clusters.ResourceKind, role)
	if role == RoleBootstrap {
		r, ok = env.State.Resource(kind.ResourceKind, role)
	}
	if !ok {
		return fmt.Errorf("the state file lists no %s cluster", role)
	}
	if r.State == "deleted" {
		return fmt.Errorf("the %s cluster %s was deleted", role, r.Name)
	}
	k, err := kube.Connect(r.Kubeconfig)
	if err != nil {
		return err
	}
	if err := k.Ready(ctx); err != nil {
		return fmt.Errorf("the %s cluster %s does not answer: %w", role, r.Name, err)
	}
	provider := infraProvider(env.Config)
	if role == RoleBootstrap {
		provider = "kind"
	}
	env.SetCluster(&Cluster{Role: role, Name: r.Name, Namespace: r.Namespace, Kubeconfig: r.Kubeconfig, Provider: provider})
	env.Printf("[resume] %s cluster %s answers (kubeconfig %s)", role, r.Name, r.Kubeconfig)
	return nil
}

func reportSteps(env *Env, stage string, steps []wait.Step) {
	for _, s := range steps {
		env.Printf("[%s] step %-28s %6.1fs", stage, s.Name, s.Duration.Seconds())
	}
	addStepEntries(stage, steps)
}

func errNoCluster(role string) error {
	return fmt.Errorf("no %s cluster in this run: the stage that creates it did not run or did not pass (resume with RESUME=1 to re-attach to a kept one)", role)
}

// installLocalPackages installs the harness's small package set where the
// config asks for it (local profile), so the packages stage checks a real
// kapp-controller reconcile.
func installLocalPackages(ctx context.Context, env *Env, stage string, k *kube.Cluster) error {
	if !env.Config.Packages.InstallLocalSet {
		return nil
	}
	cl, err := packages.NewClient(k.Config)
	if err != nil {
		return err
	}
	iv := env.Config.MustInterval(stage, "wait-kapp-controller")
	return packages.InstallSamplePackages(ctx, packages.SampleInput{Client: cl, Timeout: iv.Timeout, Interval: iv.Poll,
		Progress: env.Out, Prefix: "[" + stage + "]"})
}

func addStepEntries(stage string, steps []wait.Step) {
	for _, s := range steps {
		AddReportEntry(stage+"/"+s.Name, fmt.Sprintf("%.1fs", s.Duration.Seconds()), ReportEntryVisibilityNever)
	}
}
