package clusters

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	clusterctlclient "sigs.k8s.io/cluster-api/cmd/clusterctl/client"

	"github.com/tkg-e2e/harness/framework/infrastructure"
	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/node"
)

// Spec says which cluster to generate. It maps onto `clusterctl generate cluster`.
type Spec struct {
	Name      string
	Namespace string
	// KubernetesVersion, e.g. v1.33.1 (the CAPD ClusterClass turns it into the
	// node image kindest/node:<version>, by tag).
	KubernetesVersion string
	// Flavor of the infrastructure provider's template, e.g. development (CAPD
	// ClusterClass quick-start).
	Flavor string
	// Infrastructure whose template is used (its Provider, with the
	// configured version); nil lets clusterctl pick the only one installed.
	Infrastructure           infrastructure.Infrastructure
	ControlPlaneMachineCount int64
	WorkerMachineCount       int64
}

// provider is the infrastructure provider as clusterctl takes it, "" to let it pick.
func (s Spec) provider() string {
	if s.Infrastructure == nil {
		return ""
	}
	return s.Infrastructure.Provider()
}

func (s Spec) validate() []string {
	var errs []string
	if err := node.ValidateName("Name", s.Name); err != nil {
		errs = append(errs, err.Error())
	}
	if s.Namespace == "" {
		errs = append(errs, "Namespace is empty")
	}
	if !strings.HasPrefix(s.KubernetesVersion, "v") {
		errs = append(errs, fmt.Sprintf("KubernetesVersion %q must look like v1.33.1", s.KubernetesVersion))
	}
	// CAPD has no default template, only its ClusterClass flavor; CAPV's
	// default template is the empty flavor. The one clusterctl picks may be CAPD.
	if s.Flavor == "" && (s.Infrastructure == nil || s.Infrastructure.NeedsFlavor()) {
		errs = append(errs, "Flavor is empty (e.g. development for CAPD's ClusterClass quick-start)")
	}
	if s.ControlPlaneMachineCount < 1 || s.ControlPlaneMachineCount%2 == 0 {
		errs = append(errs, fmt.Sprintf("ControlPlaneMachineCount %d must be odd and >= 1 (etcd quorum)", s.ControlPlaneMachineCount))
	}
	if s.WorkerMachineCount < 0 {
		errs = append(errs, "WorkerMachineCount must be >= 0")
	}
	return errs
}

// GenerateInput is the input of Generate.
type GenerateInput struct {
	Spec
	// ManagementKubeconfig of the cluster the Cluster will be applied to:
	// clusterctl reads which providers and ClusterClasses it already has.
	ManagementKubeconfig string
	// ClusterctlConfigPath with the provider repositories and variables
	// (the kit's $CLUSTERCTL_CONFIG); empty means clusterctl's defaults.
	ClusterctlConfigPath string
}

// Generate renders the cluster template with the clusterctl library, like
// `clusterctl generate cluster <name> --flavor <flavor> ...`. For a
// ClusterClass flavor clusterctl adds the ClusterClass and its templates when
// the management cluster does not have them yet.
func Generate(ctx context.Context, in GenerateInput) ([]byte, error) {
	errs := in.Spec.validate()
	if in.ManagementKubeconfig == "" {
		errs = append(errs, "ManagementKubeconfig is empty")
	}
	if in.ClusterctlConfigPath != "" {
		if _, err := os.Stat(in.ClusterctlConfigPath); err != nil {
			errs = append(errs, "ClusterctlConfigPath: "+err.Error())
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("clusters.Generate: invalid input: %s", strings.Join(errs, "; "))
	}
	cp, workers := in.ControlPlaneMachineCount, in.WorkerMachineCount
	var out []byte
	err := kube.ClusterctlCall(ctx, kube.ClusterctlLog{}, func(ctx context.Context) error {
		c, err := clusterctlclient.New(ctx, in.ClusterctlConfigPath)
		if err != nil {
			return fmt.Errorf("clusterctl client from %q: %w", in.ClusterctlConfigPath, err)
		}
		tmpl, err := c.GetClusterTemplate(ctx, clusterctlclient.GetClusterTemplateOptions{
			Kubeconfig: clusterctlclient.Kubeconfig{Path: in.ManagementKubeconfig},
			ProviderRepositorySource: &clusterctlclient.ProviderRepositorySourceOptions{
				InfrastructureProvider: in.provider(), Flavor: in.Flavor,
			},
			ClusterName: in.Name, TargetNamespace: in.Namespace, KubernetesVersion: in.KubernetesVersion,
			ControlPlaneMachineCount: &cp, WorkerMachineCount: &workers,
		})
		if err != nil {
			return err
		}
		out, err = tmpl.Yaml()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("generating cluster %s/%s (flavor %s): %w", in.Namespace, in.Name, in.Flavor, err)
	}
	if len(out) == 0 {
		return nil, errors.New("clusterctl returned an empty template")
	}
	return out, nil
}
