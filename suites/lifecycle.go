package suites

import (
	"context"
	"fmt"
	"time"

	capiclusterctl "sigs.k8s.io/cluster-api/test/framework/clusterctl"

	"github.com/tkg-e2e/harness/framework/bootstrap"
	"github.com/tkg-e2e/harness/framework/clusters"
	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/packages"
)

// Step is one timed step of a stage.
type Step = bootstrap.Step

func images(cfg *config.Config) []capiclusterctl.ContainerImage {
	var out []capiclusterctl.ContainerImage
	for _, img := range cfg.Images {
		out = append(out, capiclusterctl.ContainerImage{Name: img.Name, LoadBehavior: capiclusterctl.LoadImageBehavior(img.LoadBehavior)})
	}
	return out
}

func providers(cfg *config.Config) bootstrap.Providers {
	cc := cfg.Clusterctl
	return bootstrap.Providers{Core: cc.CoreProvider, Bootstrap: cc.BootstrapProviders,
		ControlPlane: cc.ControlPlaneProviders, Infrastructure: cc.InfrastructureProviders}
}

func infraProvider(cfg *config.Config) string {
	if len(cfg.Clusterctl.InfrastructureProviders) > 0 {
		return cfg.Clusterctl.InfrastructureProviders[0]
	}
	return ""
}

// provision runs the one cluster lifecycle path and records the cluster in the Env.
func provision(ctx context.Context, env *Env, in ClusterSpecInput) (*clusters.Cluster, []Step, error) {
	t := in.Timeouts
	spec := in.Cluster
	res, err := clusters.Create(ctx, clusters.CreateInput{
		Spec: clusters.Spec{Name: spec.Name, Namespace: spec.Namespace, KubernetesVersion: spec.KubernetesVersion, Flavor: spec.Flavor,
			InfrastructureProvider: in.InfrastructureProvider, ControlPlaneMachineCount: int64(spec.ControlPlaneMachineCount),
			WorkerMachineCount: int64(spec.WorkerMachineCount)},
		Role: in.Role, ManagementKubeconfig: in.Holder.Kubeconfig, ClusterctlConfigPath: in.ClusterctlConfigPath,
		CNIManifest: in.CNIManifest, KubeconfigPath: env.KubeconfigPath(spec.Name),
		State: env.State, CreatedBy: in.Stage,
		Timeouts: clusters.CreateTimeouts{Apply: t.Apply.Timeout, APIReachable: t.WaitAPI.Timeout, CNI: t.ApplyCNI.Timeout,
			ControlPlaneInitialized: t.WaitControlPlane.Timeout, MachinesRunning: t.WaitMachines.Timeout,
			NodesReady: t.WaitNodes.Timeout, ClusterAvailable: t.WaitCluster.Timeout, Interval: t.WaitMachines.Poll},
		Progress: env.Out, Prefix: "[" + in.Stage + "]",
	})
	if err != nil {
		if res != nil {
			return nil, res.Steps, err
		}
		return nil, nil, err
	}
	steps := res.Steps
	c := res.Cluster
	env.SetCluster(&Cluster{Role: in.Role, Name: spec.Name, Namespace: spec.Namespace, Kubeconfig: c.KubeconfigPath, Provider: in.InfrastructureProvider})
	var imgs []capiclusterctl.ContainerImage
	if in.InfrastructureProvider == "docker" {
		imgs = in.Images
	}
	kapp := in.KappControllerManifest
	if in.Providers != nil {
		pr, err := clusters.PrepareManagement(ctx, clusters.PrepareManagementInput{
			Cluster: c, Images: imgs, ClusterctlConfigPath: in.ClusterctlConfigPath, Providers: *in.Providers,
			KappControllerManifest: kapp,
			Timeouts: clusters.PrepareManagementTimeouts{LoadImages: t.LoadImages.Timeout, Init: t.InitProviders.Timeout,
				ProvidersReady: t.WaitProviders.Timeout, KappApply: t.ApplyKappController.Timeout,
				KappReady: t.WaitKappController.Timeout, Interval: t.WaitProviders.Poll},
			Progress: env.Out, Prefix: "[" + in.Stage + "]",
		})
		if pr != nil {
			steps = append(steps, pr.Steps...)
		}
		if err != nil {
			return c, steps, err
		}
	} else {
		if len(imgs) > 0 {
			start := time.Now()
			if _, err := bootstrap.LoadImages(ctx, bootstrap.LoadImagesInput{ClusterName: c.Name, Images: imgs,
				Timeout: t.LoadImages.Timeout, Progress: env.Out, Prefix: "[" + in.Stage + "]"}); err != nil {
				return c, steps, err
			}
			steps = append(steps, Step{Name: "load-images", Duration: time.Since(start)})
		}
		if kapp != "" {
			start := time.Now()
			if err := clusters.InstallKappController(ctx, clusters.KappControllerInput{Cluster: c.Kube, Manifest: kapp,
				ClusterName: c.Name, ApplyTimeout: t.ApplyKappController.Timeout, ReadyTimeout: t.WaitKappController.Timeout,
				Interval: t.WaitKappController.Poll, Progress: env.Out, Prefix: "[" + in.Stage + "]"}); err != nil {
				return c, steps, err
			}
			steps = append(steps, Step{Name: "kapp-controller", Duration: time.Since(start)})
		}
	}
	if in.PostAddons != nil && kapp != "" {
		start := time.Now()
		if err := in.PostAddons(ctx, c.Kube); err != nil {
			return c, steps, err
		}
		steps = append(steps, Step{Name: "packages", Duration: time.Since(start)})
	}
	return c, steps, nil
}

// attachCluster re-attaches to a cluster a kept run recorded, checking that
// its API answers.
func attachCluster(ctx context.Context, env *Env, role string) error {
	kind, provider := clusters.ResourceKind, infraProvider(env.Config)
	if role == RoleBootstrap {
		kind, provider = bootstrap.ResourceKindCluster, "kind"
	}
	r, ok := env.State.Resource(kind, role)
	if !ok {
		return fmt.Errorf("the state file lists no %s cluster", role)
	}
	if r.State == "deleted" {
		return fmt.Errorf("the %s cluster %s was deleted", role, r.Name)
	}
	c := &Cluster{Role: role, Name: r.Name, Namespace: r.Namespace, Kubeconfig: r.Kubeconfig, Provider: provider}
	k, err := c.Connect()
	if err != nil {
		return err
	}
	if err := k.Ready(ctx); err != nil {
		return fmt.Errorf("the %s cluster %s does not answer: %w", role, r.Name, err)
	}
	env.SetCluster(c)
	env.Printf("[resume] %s cluster %s answers (kubeconfig %s)", role, r.Name, r.Kubeconfig)
	return nil
}

func errNoCluster(role string) error {
	return fmt.Errorf("no %s cluster in this run: the stage that creates it did not run or did not pass (resume with RESUME=1 to re-attach to a kept one)", role)
}

// installLocalPackages installs the harness's small package set (local
// profile), so the packages stage checks a real kapp-controller reconcile.
func installLocalPackages(ctx context.Context, env *Env, stage string, k *kube.Cluster, iv config.Interval) error {
	return packages.InstallSamplePackages(ctx, packages.SampleInput{Client: k.Client, Timeout: iv.Timeout, Interval: iv.Poll,
		Progress: env.Out, Prefix: "[" + stage + "]"})
}
