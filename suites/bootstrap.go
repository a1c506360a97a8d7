package suites

import (
	"context"

	capiclusterctl "sigs.k8s.io/cluster-api/test/framework/clusterctl"

	"github.com/tkg-e2e/harness/framework/bootstrap"
	"github.com/tkg-e2e/harness/framework/cleanup"
	"github.com/tkg-e2e/harness/framework/clusters"
	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/infrastructure"
	"github.com/tkg-e2e/harness/framework/kind"
	"github.com/tkg-e2e/harness/framework/node"
	"github.com/tkg-e2e/harness/framework/providers"
	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/framework/stages"
)

// Bootstrap creates the kind bootstrap cluster with the Cluster API providers.
var Bootstrap = Stage{
	Definition: stages.Definition{Name: "bootstrap", Category: stages.Infrastructure,
		Intervals: []string{"create-kind", "wait-kind-nodes", "load-images", "init-providers", "wait-providers"},
		Kinds:     []string{kind.ResourceKind},
		Doc:       "kind cluster (kind as a library), images loaded, `clusterctl init` with cert-manager and the providers"},
	Spec: func(ctx context.Context, env func() *Env) {
		BootstrapSpec(ctx, func() BootstrapSpecInput {
			e := env()
			cfg := e.Config
			return BootstrapSpecInput{Env: e, Name: cfg.Clusters.Bootstrap.Name, NodeImage: cfg.Clusters.Bootstrap.NodeImage,
				Images: images(cfg, RoleBootstrap), ClusterctlConfigPath: e.ClusterctlConfig(""), Providers: providersOf(cfg),
				Timeouts: bootstrapTimeouts(e.Run)}
		})
	},
	Cleanup: func(o CleanupOptions) StageCleanup {
		// The leak checks cover every cluster of the run: kind's and
		// CAPD's nodes are containers on this host either way.
		return StageCleanup{
			Deleters: map[string]cleanup.Deleter{kind.ResourceKind: kind.Deleter(o.KindTimeout, o.Progress, o.Prefix)},
			// A kind cluster goes by removing its containers by ID.
			Independent: map[string]func(run.Resource) bool{kind.ResourceKind: func(run.Resource) bool { return true }},
			LeakChecks: []cleanup.LeakCheck{node.LeakCheck(kind.ResourceKind, clusters.ResourceKind),
				kind.LeakCheck(kind.ResourceKind, clusters.ResourceKind)},
		}
	},
}

// bootstrapTimeouts maps the bootstrap stage's interval keys onto
// bootstrap.Bootstrap's waits (the stage and cleanup's throw-away bootstrap
// cluster use the same).
func bootstrapTimeouts(env *Run) bootstrap.Timeouts {
	iv := func(k string) config.Interval { return env.Interval("bootstrap", k) }
	return bootstrap.Timeouts{Create: iv("create-kind"), NodesReady: iv("wait-kind-nodes"),
		LoadImages: iv("load-images"), Init: iv("init-providers"), ProvidersReady: iv("wait-providers")}
}

// BootstrapSpecInput is the input of BootstrapSpec.
type BootstrapSpecInput struct {
	Env *Env
	// Name and NodeImage of the kind cluster (node image by tag).
	Name, NodeImage string
	// Images are loaded into the kind node before `clusterctl init`.
	Images               []capiclusterctl.ContainerImage
	ClusterctlConfigPath string
	Providers            providers.Providers
	Timeouts             bootstrap.Timeouts
}

func (in BootstrapSpecInput) StageOf() (*Env, string) { return in.Env, "bootstrap" }

func (in BootstrapSpecInput) Validate() error {
	return InputErrors(in.Env,
		Unless(in.Name != "" && in.NodeImage != "", "Name and NodeImage of the kind cluster are required (clusters.bootstrap in the profile)"))
}

// BootstrapSpec creates the kind bootstrap cluster (docker socket mounted for
// CAPD), loads the configured images and runs `clusterctl init` with
// cert-manager and the configured providers, waiting for every provider.
func BootstrapSpec(_ context.Context, inputGetter func() BootstrapSpecInput) {
	DeclareStage("creates the kind bootstrap cluster and installs the Cluster API providers", inputGetter, func(input BootstrapSpecInput) StageFuncs {
		env := input.Env
		return StageFuncs{
			Run: func(ctx context.Context) error {
				warnHostLimits(env.Run)
				if err := enoughDisk(ctx, env, "kind cluster "+input.Name, 1); err != nil {
					return err
				}
				res, err := bootstrap.Bootstrap(ctx, bootstrap.Input{
					Name: input.Name, NodeImage: input.NodeImage, KubeconfigPath: env.KubeconfigPath(input.Name), Images: input.Images,
					ClusterctlConfigPath: input.ClusterctlConfigPath, Providers: input.Providers,
					State: env.State, CreatedBy: "bootstrap", Timeouts: input.Timeouts, Progress: env.Out, Prefix: "[bootstrap]",
				})
				if err != nil {
					return err
				}
				StepEntries(env, "bootstrap", res.Steps)
				kc := &Cluster{Role: RoleBootstrap, Name: res.Cluster.Name, Kubeconfig: res.Cluster.KubeconfigPath, Infrastructure: infrastructure.KindCluster}
				env.SetCluster(kc)
				// Watched from here through the management stage (watch.go).
				watchForMove(env, kc)
				return nil
			},
			Reattach: func(ctx context.Context) error {
				// After move the kind cluster has done its job and is gone.
				if env.State.Passed("move") {
					return nil
				}
				return attachCluster(ctx, env, RoleBootstrap)
			},
		}
	})
}
