package tanzucli

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/tanzu"
	"github.com/tkg-e2e/harness/suites"
)

// The tanzu driver (profile driver: tanzu) makes the clusters the way TKG
// users do, with the tanzu CLI (issue 13). The registry keeps its stages,
// needs and labels (FOCUS=move still means bootstrap → management → move);
// the driver binds them to other specs:
//
//   - bootstrap checks that the CLI runs (`tanzu version`). The kind
//     bootstrap cluster itself is made by `tanzu management-cluster
//     create`, inside the management stage.
//   - management is that one command: it bootstraps kind, installs the
//     providers, creates the management cluster and moves it into itself.
//     The kind cluster is attached to the Env as soon as the CLI announces
//     its kubeconfig (so a failure before the move still collects it), the
//     management cluster when its kubeconfig is saved; the transcript's
//     phases are the stage's timed steps. Then the harness's own check:
//     the Cluster Available with every Machine Running with a node.
//   - move checks after the fact what can still be checked of the CLI's
//     move: the management cluster holds its own Cluster, unpaused, and its
//     Machines reconcile and then stay the same (no rollout); the kind
//     cluster is gone. The per-kind inventory needs a "before" the harness
//     no longer sees; the move's phases give its timing.
//   - workload is `tanzu cluster create`; the cluster's kubeconfig comes
//     from its Cluster API Secret on the management cluster.
//   - cleanup runs `tanzu cluster delete` and `tanzu management-cluster
//     delete`, then the same leak checks.

// Resource kinds the tanzu driver records; the CLI deletes them.
const (
	TanzuManagementKind = "tanzu-management-cluster"
	TanzuClusterKind    = "tanzu-cluster"
	// tanzuManagementNamespace is where TKG puts the management cluster's
	// own Cluster object; it is not configurable in the CLI.
	tanzuManagementNamespace = "tkg-system"
)

// Provisioner is the tanzu CLI as the run's provisioner (driver: tanzu).
var Provisioner suites.Provisioner = provisioner{}

type provisioner struct{}

func (provisioner) Name() string { return config.DriverTanzu }

func (provisioner) Bindings() suites.Bindings {
	return suites.Bindings{
		Bootstrap: suites.Binding{Spec: tanzuBootstrapBinding, Intervals: []string{"tanzu-version"},
			Doc: "`tanzu version` answers; the kind bootstrap cluster is made by `tanzu management-cluster create` (management stage)"},
		Management: suites.Binding{Spec: tanzuManagementBinding, Intervals: []string{"tanzu-create"}, Kinds: []string{TanzuManagementKind},
			Cleanup: tanzuManagementCleanup,
			Doc:     "`tanzu management-cluster create`: kind, providers, the management cluster, move; kind attached as soon as announced"},
		Move: suites.Binding{Spec: tanzuMoveBinding,
			Doc: "the CLI's move, checked after the fact: Cluster self-hosted and unpaused, no rollout, kind gone"},
		Workload: suites.Binding{Spec: tanzuWorkloadBinding, Intervals: []string{"tanzu-create"}, Kinds: []string{TanzuClusterKind},
			Cleanup: tanzuCleanup, Doc: "`tanzu cluster create` from the management cluster"},
		CleanupIntervals: []string{"tanzu-delete"},
		CompleteCleanup:  completeCleanup,
	}
}

// completeCleanup gives the teardown the run's CLI to delete its clusters
// with, each command bounded by cleanup/tanzu-delete.
func completeCleanup(env *suites.Env, o *suites.CleanupOptions) {
	cli, err := CLIOf(env)
	if err != nil {
		return
	}
	timeout := env.Interval(suites.ScopeCleanup, "tanzu-delete").Timeout
	o.CLIDelete = func(ctx context.Context, name string, args []string, prefix string) (string, error) {
		res, err := cli.Run(ctx, name, args, timeout, tanzu.Hooks{}, prefix)
		if err != nil {
			return "", err
		}
		return res.Command, nil
	}
}

// tanzuConfigValues are the cluster configuration file's variables for a
// role: the profile's clusterctl variables for it (the vCenter, the
// template, the cluster's own variables: TKG reads the same names), then
// what the harness derives from clusters:, then tanzu.configValues.
func tanzuConfigValues(cfg *config.Config, role string, spec config.WorkloadCluster, namespace string) map[string]string {
	out := map[string]string{}
	for k, v := range cfg.ClusterctlVariables(role) {
		if v != "" && tanzuVariableName.MatchString(k) {
			out[k] = v
		}
	}
	maps.Copy(out, map[string]string{
		"CLUSTER_NAME": spec.Name, "CLUSTER_PLAN": "dev", "INFRASTRUCTURE_PROVIDER": cfg.Infrastructure().Name(),
		"CONTROL_PLANE_MACHINE_COUNT": strconv.Itoa(spec.ControlPlaneMachineCount),
		"WORKER_MACHINE_COUNT":        strconv.Itoa(spec.WorkerMachineCount),
	})
	if namespace != "" {
		out["NAMESPACE"] = namespace
	}
	maps.Copy(out, cfg.Tanzu.ConfigValues)
	return out
}

var tanzuVariableName = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// kindClusterName reads the kind cluster's name from the kubeconfig the
// CLI announced (its current context is kind-<name>).
func kindClusterName(path string) (string, error) {
	kc, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return "", err
	}
	ctx, ok := kc.Contexts[kc.CurrentContext]
	if !ok || ctx.Cluster == "" {
		return "", fmt.Errorf("its current context %q names no cluster", kc.CurrentContext)
	}
	name, ok := strings.CutPrefix(ctx.Cluster, "kind-")
	if !ok || name == "" {
		return "", fmt.Errorf("its cluster %q is not a kind cluster (kind-<name>)", ctx.Cluster)
	}
	return name, nil
}

func hasPhase(res *tanzu.Result, name string) bool {
	return res != nil && slices.ContainsFunc(res.Phases, func(p tanzu.Phase) bool { return p.Name == name })
}

func phaseNames(ps []tanzu.Phase) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return strings.Join(out, ", ")
}

// phaseTable is a command's phases for the stage's report entry.
func phaseTable(res *tanzu.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: exit %d in %s\n", res.Command, res.ExitCode, res.Duration.Round(100*time.Millisecond))
	for _, p := range res.Phases {
		fmt.Fprintf(&b, "  %-24s %8.1fs  %s\n", p.Name, p.Duration.Seconds(), p.Marker)
	}
	return b.String()
}
