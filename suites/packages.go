package suites

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/packages"
	"github.com/tkg-e2e/harness/framework/stages"
)

// Packages checks that every expected PackageInstall reconciles.
var Packages = Stage{
	Definition: stages.Definition{Name: "packages", Needs: []string{"workload"}, Category: stages.Package,
		Intervals: []string{"wait-reconcile"},
		Doc:       "kapp-controller PackageInstalls reach ReconcileSucceeded; failures quote usefulErrorMessage"},
	Spec: func(ctx context.Context, env func() *Env) {
		PackagesSpec(ctx, func() PackagesSpecInput { return PackagesSpecInput{Env: env()} })
	},
}

// PackagesSpecInput is the input of PackagesSpec.
type PackagesSpecInput struct {
	Env *Env
}

// PackagesSpec waits for every expected PackageInstall of every cluster of the
// run to reach ReconcileSucceeded; on failure the report quotes
// usefulErrorMessage (or the condition message when kapp-controller left it
// empty). Where TKG's ClusterBootstrap CRD exists, its status must mirror them.
func PackagesSpec(_ context.Context, inputGetter func() PackagesSpecInput) {
	var input PackagesSpecInput
	BeforeEach(func() {
		input = inputGetter()
		Expect(input.Env.Validate()).To(Succeed())
		Expect(input.Env.Config.Packages.Expected).NotTo(BeEmpty(), "config packages.expected is empty")
	})

	It("reconciles every expected PackageInstall", func(ctx SpecContext) {
		env := input.Env
		RunStage(ctx, env, "packages", StageFuncs{Run: func(ctx context.Context) error {
			list, err := packages.Load(env.Config.Packages.Expected)
			if err != nil {
				return err
			}
			iv := env.Interval("packages", "wait-reconcile")
			var mgmt client.Client
			if c := env.Cluster(RoleManagement); c != nil {
				if mgmt, _, err = clientsFor(c); err != nil {
					return err
				}
			}
			var reports []string
			var failures []error
			for _, c := range env.Clusters() {
				if c.Role == RoleBootstrap {
					continue
				}
				expected, err := list.For(c.Role, map[string]string{"CLUSTER_NAME": c.Name, "CLUSTER_NAMESPACE": c.Namespace})
				if err != nil {
					return err
				}
				if len(expected) == 0 {
					continue
				}
				cl, _, err := clientsFor(c)
				if err != nil {
					return err
				}
				rep, err := packages.Check(ctx, packages.CheckInput{Client: cl, ManagementClient: mgmt, Expected: expected,
					Cluster: c.Name, Role: c.Role, Timeout: iv.Timeout, Interval: iv.Poll,
					Progress: env.Out, Prefix: "[packages]", Redactor: env.Redactor})
				var failed *packages.FailedError
				switch {
				case errors.As(err, &failed):
					failures = append(failures, fmt.Errorf("%s cluster %q: %s", c.Role, c.Name, rep.Summary()))
				case err != nil:
					return err
				}
				if mgmt != nil && c.Role != RoleManagement {
					bs, err := packages.CheckClusterBootstrap(ctx, packages.BootstrapInput{ManagementClient: mgmt,
						ClusterName: c.Name, ClusterNamespace: c.Namespace, Packages: rep, Timeout: iv.Timeout, Interval: iv.Poll})
					if err != nil {
						failures = append(failures, fmt.Errorf("%s cluster %q ClusterBootstrap: %w", c.Role, c.Name, err))
					} else if bs != nil && bs.Skipped {
						env.Printf("[packages] ClusterBootstrap check of %s skipped: %s", c.Name, bs.SkipReason)
					}
				}
				reports = append(reports, rep.Markdown())
			}
			if len(reports) == 0 {
				return fmt.Errorf("no cluster of this run has expected packages in %s", env.Config.Packages.Expected)
			}
			md := strings.Join(reports, "\n\n")
			if err := os.WriteFile(env.Path("packages.md"), []byte(env.Redactor.String(md)), 0o644); err != nil {
				return err
			}
			AddReportEntry("packages", md)
			if len(failures) > 0 {
				return fmt.Errorf("%w\n\n%s", errors.Join(failures...), md)
			}
			return nil
		}})
	})
}
