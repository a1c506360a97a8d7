package suites

import (
	"context"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tkg-e2e/harness/framework/bootstrap"
	"github.com/tkg-e2e/harness/framework/stages"
)

// BootstrapSpecInput is the input of BootstrapSpec.
type BootstrapSpecInput struct {
	Env *Env
	// PostInit runs once the providers are Available on the kind cluster.
	PostInit func(ctx context.Context, kubeconfig string)
}

// BootstrapSpec creates the kind bootstrap cluster (docker socket mounted for
// CAPD), loads the configured images and runs `clusterctl init` with
// cert-manager and the configured providers, waiting for every provider.
func BootstrapSpec(inputGetter func() BootstrapSpecInput) {
	var input BootstrapSpecInput
	BeforeEach(func() {
		input = inputGetter()
		Expect(input.Env.Validate()).To(Succeed())
	})

	It("creates the kind bootstrap cluster and installs the Cluster API providers", func(ctx SpecContext) {
		env := input.Env
		cfg := env.Config
		RunStage(ctx, env, stages.Bootstrap, StageFuncs{
			Run: func(ctx context.Context) error {
				warnHostLimits(env)
				if err := os.MkdirAll(KubeconfigDir(env), 0o700); err != nil {
					return err
				}
				create := cfg.MustInterval(stages.Bootstrap, "create-kind")
				ctrl := cfg.MustInterval(stages.Bootstrap, "wait-controllers")
				res, err := bootstrap.Bootstrap(ctx, bootstrap.Input{
					Name: cfg.Clusters.Bootstrap.Name, NodeImage: cfg.Clusters.Bootstrap.NodeImage,
					KubeconfigPath: kubeconfigPath(env, cfg.Clusters.Bootstrap.Name), Images: images(cfg),
					ClusterctlConfigPath: cfg.Clusterctl.ConfigPath, Providers: clusterctlProviders(cfg),
					State: env.State, CreatedBy: stages.Bootstrap,
					Timeouts: bootstrap.Timeouts{Create: create.Timeout, NodesReady: create.Timeout, LoadImages: create.Timeout,
						Init: ctrl.Timeout, ProvidersReady: ctrl.Timeout, Interval: ctrl.Poll},
					Progress: env.Out, Prefix: "[bootstrap]",
				})
				if err != nil {
					return err
				}
				reportSteps(env, stages.Bootstrap, res.Steps)
				env.SetCluster(&Cluster{Role: RoleBootstrap, Name: res.Cluster.Name, Kubeconfig: res.Cluster.KubeconfigPath, Provider: "kind"})
				if input.PostInit != nil {
					input.PostInit(ctx, res.Cluster.KubeconfigPath)
				}
				return nil
			},
			Reattach: func(ctx context.Context) error {
				// After move the kind cluster has done its job and is gone.
				if env.State.Passed(stages.Move) {
					return nil
				}
				return attachCluster(ctx, env, RoleBootstrap)
			},
		})
	})
}
