package suites

import (
	"context"
	"fmt"

	capiclusterctl "sigs.k8s.io/cluster-api/test/framework/clusterctl"

	"github.com/tkg-e2e/harness/framework/clusters"
	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/infrastructure"
	kindpkg "github.com/tkg-e2e/harness/framework/kind"
	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/packages"
	"github.com/tkg-e2e/harness/framework/providers"
	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/framework/wait"
)

// Step is one timed step of a stage.
type Step = wait.Step

// images are the profile's images a cluster of role gets (images[].roles).
func images(cfg *config.Config, role string) []capiclusterctl.ContainerImage {
	var out []capiclusterctl.ContainerImage
	for _, img := range cfg.Images {
		if img.ForRole(role) {
			out = append(out, capiclusterctl.ContainerImage{Name: img.Name, LoadBehavior: capiclusterctl.LoadImageBehavior(img.LoadBehavior)})
		}
	}
	return out
}

func providersOf(cfg *config.Config) providers.Providers {
	cc := cfg.Clusterctl
	return providers.Providers{Core: cc.CoreProvider, Bootstrap: cc.BootstrapProviders,
		ControlPlane: cc.ControlPlaneProviders, Infrastructure: cc.InfrastructureProviders}
}

// provision runs the one cluster lifecycle path (clusters.Provision) and
// records the cluster in the Env.
func provision(ctx context.Context, env *Env, in ClusterSpecInput) ([]Step, error) {
	spec := in.Cluster
	pin := clusters.ProvisionInput{
		CreateInput: clusters.CreateInput{
			Spec: clusters.Spec{Name: spec.Name, Namespace: spec.Namespace, KubernetesVersion: spec.KubernetesVersion, Flavor: spec.Flavor,
				Infrastructure: in.Infrastructure, ControlPlaneMachineCount: int64(spec.ControlPlaneMachineCount),
				WorkerMachineCount: int64(spec.WorkerMachineCount)},
			Role: in.Role, ID: in.ID, ManagementKubeconfig: in.Holder.Kubeconfig, ClusterctlConfigPath: in.ClusterctlConfigPath,
			CNIManifest: in.CNIManifest, KubeconfigPath: env.KubeconfigPath(spec.Name),
			State: env.State, CreatedBy: in.Stage, Progress: env.Out, Prefix: clusterPrefix(in),
			Customize: in.Customize, StopAfter: in.StopAfter, StopReason: in.StopReason,
		},
		Images: in.Images, KappControllerManifest: in.KappControllerManifest, PostAddons: in.PostAddons,
		Timeouts: in.Timeouts,
	}
	if in.Providers != nil {
		pin.Providers = *in.Providers
	}
	if in.Role == RoleManagement {
		pin.Created = func(c *clusters.Cluster) {
			watchForMove(env, &Cluster{Role: in.Role, Name: spec.Name, Namespace: spec.Namespace, Kubeconfig: c.KubeconfigPath})
		}
	}
	if in.Infrastructure.NodesAreContainers() {
		if err := enoughDisk(ctx, env, fmt.Sprintf("cluster %s (%s)", spec.Name, in.ID), spec.ControlPlaneMachineCount+spec.WorkerMachineCount); err != nil {
			return nil, err
		}
	}
	res, err := clusters.Provision(ctx, pin)
	if res == nil {
		return nil, err
	}
	if res.Cluster == nil {
		return res.Steps, err
	}
	// The Env learns the cluster as soon as Create made it, so a failure
	// later in the path still collects its artifacts.
	c := &Cluster{ID: run.IDUnlessRole(in.ID, in.Role), Role: in.Role, Name: spec.Name, Namespace: spec.Namespace, Kubeconfig: res.Cluster.KubeconfigPath,
		Infrastructure: in.Infrastructure}
	env.SetCluster(c)
	return res.Steps, err
}

// clusterPrefix starts a cluster's progress lines: the stage, and the
// cluster's ID when a stage makes several ("[workload/workload-2]").
func clusterPrefix(in ClusterSpecInput) string {
	if in.ID == in.Role {
		return "[" + in.Stage + "]"
	}
	return "[" + in.Stage + "/" + in.ID + "]"
}

// attachCluster re-attaches to a cluster a kept run recorded, by its ID,
// checking that its API answers.
func attachCluster(ctx context.Context, env *Env, id string) error {
	role := config.RoleOf(id)
	kind, infra := clusters.ResourceKind, env.Config.Infrastructure()
	if role == RoleBootstrap {
		kind, infra = kindpkg.ResourceKind, infrastructure.KindCluster
	}
	r, ok := env.State.Resource(kind, id)
	if !ok {
		return fmt.Errorf("the state file lists no %s cluster", id)
	}
	if r.State == "deleted" {
		return fmt.Errorf("the %s cluster %s was deleted", id, r.Name)
	}
	return ReattachCluster(ctx, env, &Cluster{ID: run.IDUnlessRole(id, role), Role: role, Name: r.Name, Namespace: r.Namespace, Kubeconfig: r.Kubeconfig,
		Infrastructure: infra})
}

// reattach gives the Env a cluster of a kept run once its API answers.
func ReattachCluster(ctx context.Context, env *Env, c *Cluster) error {
	k, err := c.Connect()
	if err != nil {
		return err
	}
	if err := k.Ready(ctx); err != nil {
		return fmt.Errorf("the %s cluster %s does not answer: %w", c.Role, c.Name, err)
	}
	env.SetCluster(c)
	env.Printf("[resume] %s cluster %s answers (kubeconfig %s)", c.Role, c.Name, c.Kubeconfig)
	return nil
}

func ErrNoCluster(role string) error {
	return fmt.Errorf("no %s cluster in this run: the stage that creates it did not run or did not pass (resume with RESUME=1 to re-attach to a kept one)", role)
}

// installLocalPackages installs the harness's small package set (local
// profile), so the packages stage checks a real kapp-controller reconcile.
func installLocalPackages(ctx context.Context, env *Run, stage string, k *kube.Cluster, iv config.Interval) error {
	return packages.InstallSamplePackages(ctx, packages.SampleInput{Client: k.Client, Timeout: iv.Timeout, Interval: iv.Poll,
		Progress: env.Out, Prefix: "[" + stage + "]"})
}
