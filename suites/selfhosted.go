package suites

import (
	"context"
	"fmt"
	"time"

	"github.com/tkg-e2e/harness/framework/bootstrap"
	"github.com/tkg-e2e/harness/framework/clusters"
	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/kind"
	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/move"
	"github.com/tkg-e2e/harness/framework/run"
)

// removedByContainerID is the note cleanup's "how" carries for a
// self-hosted management cluster whose containers were removed because the
// profile says so, so the log explains the choice.
const removedByContainerID = "by container ID because cleanup.selfHosted is " + config.SelfHostedRemoveContainers +
	"; " + config.SelfHostedMoveBack + " would delete it through a throw-away kind cluster"

// removedManagedByContainerID is the same note for a cluster a management
// cluster manages (cleanup.managed: removeContainers).
const removedManagedByContainerID = "by container ID because cleanup.managed is " + config.ManagedRemoveContainers +
	"; " + config.ManagedDelete + " would delete it through its management cluster"

// selfHostedCleanup is how cleanup deletes a self-hosted management cluster,
// as cleanup.selfHosted says: moveBack (selfHostedDeleter, every provider)
// or removeContainers (the run's recorded containers by ID; validation
// allows it only when every infrastructure provider is docker). byID says
// which of the two it is (CleanupOptions.SelfHostedByID).
func selfHostedCleanup(env *Env, deleteTimeout, poll time.Duration) (f clusters.SelfHostedFunc, byID bool) {
	if env.Config != nil && env.Config.RemovesSelfHostedContainers() {
		return clusters.RemoveContainers(removedByContainerID), true
	}
	return selfHostedDeleter(env, deleteTimeout, poll), false
}

// selfHostedDeleter deletes a self-hosted management cluster as `tanzu
// management-cluster delete` does, on every provider: a throw-away kind
// bootstrap cluster with the run's providers, `clusterctl move` back into it,
// then a Cluster API delete there, then the kind cluster goes. A management
// cluster cannot delete itself, and removing its containers by label only
// exists for CAPD (on vSphere it would leave every VM running).
func selfHostedDeleter(env *Env, deleteTimeout, poll time.Duration) clusters.SelfHostedFunc {
	return func(ctx context.Context, r run.Resource) (string, error) {
		cfg := env.Config
		name := teardownKindName(cfg.Clusters.Bootstrap.Name)
		kc := env.KubeconfigPath(name)
		env.Printf("[cleanup] %s is self-hosted: moving it back into a throw-away kind cluster %s to delete it there", r.Key(), name)
		// Bootstrap records the kind cluster in the run state first: if
		// anything below fails, cleanup and the leak checks still see it.
		_, err := bootstrap.Bootstrap(ctx, bootstrap.Input{Name: name, NodeImage: cfg.Clusters.Bootstrap.NodeImage, KubeconfigPath: kc,
			Images: images(cfg, RoleBootstrap), ClusterctlConfigPath: env.ClusterctlConfig(""), Providers: providersOf(cfg), State: env.State,
			CreatedBy: "cleanup", Timeouts: bootstrapTimeouts(env), Progress: env.Out, Prefix: "[cleanup]"})
		defer func() {
			del := kind.Deleter(deleteTimeout, env.Out, "[cleanup]")
			key := run.Resource{Kind: kind.ResourceKind, Name: name}.Key()
			if _, derr := del(context.WithoutCancel(ctx), run.Resource{Kind: kind.ResourceKind, Name: name, Kubeconfig: kc}); derr == nil {
				_ = env.State.SetResourceState(key, "deleted")
			} else {
				env.Printf("[cleanup] deleting the throw-away kind cluster %s: %v", name, derr)
			}
		}()
		if err != nil {
			return "", fmt.Errorf("creating the throw-away bootstrap cluster %s to move %s back into: %w", name, r.Key(), err)
		}
		if err := move.Pivot(ctx, move.PivotInput{FromKubeconfig: r.Kubeconfig, ToKubeconfig: kc, Namespace: r.Namespace,
			ClusterctlConfigPath: env.ClusterctlConfig(""), Timeout: deleteTimeout, Progress: env.Out, Prefix: "[cleanup]"}); err != nil {
			return "", err
		}
		k, err := kube.Connect(kc)
		if err != nil {
			return "", err
		}
		if err := clusters.Delete(ctx, clusters.DeleteInput{Management: k, Namespace: r.Namespace, Name: r.Name,
			Timeout: deleteTimeout, Interval: poll, Progress: env.Out, Prefix: "[cleanup]"}); err != nil {
			return "", fmt.Errorf("deleting %s through the throw-away bootstrap cluster %s: %w", r.Key(), name, err)
		}
		return fmt.Sprintf("moved back into throw-away kind cluster %s and deleted there", name), nil
	}
}

// teardownKindName is the throw-away bootstrap cluster's name, within kind's
// name limit.
func teardownKindName(bootstrapName string) string {
	const suffix = "-teardown"
	if len(bootstrapName)+len(suffix) > 40 {
		bootstrapName = bootstrapName[:40-len(suffix)]
	}
	return bootstrapName + suffix
}
