package suites

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tkg-e2e/harness/framework/clusters"
	"github.com/tkg-e2e/harness/framework/stages"
)

// WorkloadSpecInput is the input of WorkloadSpec.
type WorkloadSpecInput struct {
	Env *Env
	// PostCreate runs once the workload cluster is Available with its addons.
	PostCreate func(ctx context.Context, c *clusters.Cluster)
}

// WorkloadSpec creates a workload cluster from the (moved) management
// cluster, saves its kubeconfig and installs kapp-controller and the local
// package set.
func WorkloadSpec(inputGetter func() WorkloadSpecInput) {
	var input WorkloadSpecInput
	BeforeEach(func() {
		input = inputGetter()
		Expect(input.Env.Validate()).To(Succeed())
	})

	It("creates a workload cluster from the management cluster", func(ctx SpecContext) {
		env := input.Env
		RunStage(ctx, env, stages.Workload, StageFuncs{
			Run: func(ctx context.Context) error {
				mgmt := env.Cluster(RoleManagement)
				if mgmt == nil {
					return errNoCluster(RoleManagement)
				}
				c, err := createCluster(ctx, env, RoleWorkload, env.Config.Clusters.Workload, stages.Workload, mgmt)
				if err != nil {
					return err
				}
				if input.PostCreate != nil {
					input.PostCreate(ctx, c)
				}
				return nil
			},
			Reattach: func(ctx context.Context) error { return attachCluster(ctx, env, RoleWorkload) },
		})
	})
}
