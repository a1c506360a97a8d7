package suites

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tkg-e2e/harness/framework/clusters"
	"github.com/tkg-e2e/harness/framework/stages"
)

// ManagementSpecInput is the input of ManagementSpec.
type ManagementSpecInput struct {
	Env *Env
	// PostCreate runs once the management cluster is Available and prepared.
	PostCreate func(ctx context.Context, c *clusters.Cluster)
}

// ManagementSpec creates the management cluster from the bootstrap cluster,
// waits for control plane, Machines and Nodes, loads the images into its
// nodes, runs `clusterctl init` on it and installs kapp-controller (and the
// local package set), as TKG's management cluster create does.
func ManagementSpec(inputGetter func() ManagementSpecInput) {
	var input ManagementSpecInput
	BeforeEach(func() {
		input = inputGetter()
		Expect(input.Env.Validate()).To(Succeed())
	})

	It("creates the management cluster and installs its providers and packages", func(ctx SpecContext) {
		env := input.Env
		cfg := env.Config
		RunStage(ctx, env, stages.Management, StageFuncs{
			Run: func(ctx context.Context) error {
				holder := env.Cluster(RoleBootstrap)
				if holder == nil {
					return errNoCluster(RoleBootstrap)
				}
				c, err := createCluster(ctx, env, RoleManagement, cfg.Clusters.Management, stages.Management, holder)
				if err != nil {
					return err
				}
				if input.PostCreate != nil {
					input.PostCreate(ctx, c)
				}
				return nil
			},
			Reattach: func(ctx context.Context) error { return attachCluster(ctx, env, RoleManagement) },
		})
	})
}
