package tanzucli

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/infrastructure"
	"github.com/tkg-e2e/harness/framework/kind"
	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/framework/tanzu"
	"github.com/tkg-e2e/harness/suites"
)

// This file is the workload stage with the tanzu driver: `tanzu cluster create` from the management cluster.

func tanzuWorkloadBinding(ctx context.Context, env func() *suites.Env) {
	TanzuWorkloadSpec(ctx, func() TanzuWorkloadSpecInput {
		e := env()
		cli, _ := CLIOf(e)
		spec := e.Config.Clusters.Workload
		return TanzuWorkloadSpecInput{Env: e, CLI: cli, Cluster: spec, Values: tanzuConfigValues(e.Config, suites.RoleWorkload, spec, spec.Namespace),
			Infrastructure: e.Config.Infrastructure(), Timeout: e.Interval("workload", "tanzu-create").Timeout,
			WaitAPI: e.Interval("workload", "wait-api"), Ready: e.Interval("workload", "wait-cluster")}
	})
}

// TanzuWorkloadSpecInput is the input of TanzuWorkloadSpec.
type TanzuWorkloadSpecInput struct {
	Env     *suites.Env
	CLI     *CLI
	Cluster config.WorkloadCluster
	Values  map[string]string
	// Infrastructure is where the workload cluster's nodes run.
	Infrastructure infrastructure.Infrastructure
	// Timeout bounds `tanzu cluster create` (workload/tanzu-create);
	// WaitAPI the wait for its kubeconfig Secret and API (workload/wait-api);
	// Ready the harness's own check after (workload/wait-cluster).
	Timeout        time.Duration
	WaitAPI, Ready config.Interval
}

func (in TanzuWorkloadSpecInput) StageOf() (*suites.Env, string) { return in.Env, "workload" }

func (in TanzuWorkloadSpecInput) Validate() error {
	return suites.InputErrors(in.Env, suites.Unless(in.CLI != nil, "CLI is required: the profile's driver must be tanzu (tanzucli.CLIOf)"),
		suites.Unless(in.Cluster.Name != "" && in.Cluster.Namespace != "", "the workload cluster's name and namespace are required (clusters.workload)"),
		suites.Unless(in.Infrastructure != nil, "Infrastructure is required (clusterctl.infrastructureProviders)"),
		suites.Unless(in.Timeout > 0 && in.WaitAPI.Timeout > 0 && in.Ready.Timeout > 0, "Timeout, WaitAPI and Ready must be positive (intervals workload/tanzu-create, wait-api, wait-cluster)"))
}

// TanzuWorkloadSpec runs `tanzu cluster create`, attaches the cluster
// from its Cluster API kubeconfig Secret, and checks it.
func TanzuWorkloadSpec(_ context.Context, inputGetter func() TanzuWorkloadSpecInput) {
	suites.DeclareStage("creates the workload cluster with tanzu cluster create", inputGetter, func(input TanzuWorkloadSpecInput) suites.StageFuncs {
		env := input.Env
		return suites.StageFuncs{
			Run: func(ctx context.Context) error {
				mgmt := env.Cluster(suites.RoleManagement)
				if mgmt == nil {
					return suites.ErrNoCluster(suites.RoleManagement)
				}
				res, err := TanzuClusterCreate(ctx, input)
				if res != nil {
					reportPhases(env, "workload", res, res.Phases)
				}
				if err != nil {
					return err
				}
				if err := attachWorkload(ctx, env, mgmt, input); err != nil {
					return err
				}
				return tanzuClusterReady(ctx, env.Run, "workload", mgmt, env.Cluster(suites.RoleWorkload), input.Ready)
			},
			Reattach: func(ctx context.Context) error {
				return attachTanzuCluster(ctx, env, TanzuClusterKind, suites.RoleWorkload)
			},
		}
	})
}

// TanzuClusterCreate runs `tanzu cluster create` with its own cluster
// configuration file, the cluster recorded in the run state first.
func TanzuClusterCreate(ctx context.Context, in TanzuWorkloadSpecInput) (*tanzu.Result, error) {
	if err := in.Validate(); err != nil {
		return nil, fmt.Errorf("TanzuClusterCreate: %w", err)
	}
	name := in.Cluster.Name
	r := run.Resource{Kind: TanzuClusterKind, Name: name, Namespace: in.Cluster.Namespace, Role: suites.RoleWorkload,
		Kubeconfig: in.Env.KubeconfigPath(name), CreatedBy: "workload", State: "creating",
		DeleteHint: in.CLI.deleteHint(tanzu.ClusterDeleteArgs(name, in.Cluster.Namespace)), Attributes: map[string]string{"provider": in.Infrastructure.Name()}}
	return runCreate(ctx, createCommand{Env: in.Env, CLI: in.CLI, Resource: &r, Values: in.Values, Stage: "workload",
		Name: "cluster-create-" + name, Args: func(cf string) []string { return tanzu.ClusterCreateArgs(cf, in.CLI.Verbosity) }, Timeout: in.Timeout})
}

// tanzuKindResource is the run state's record of the kind cluster
// `tanzu management-cluster create` makes: first by the name it announces,
// then ready with the kubeconfig it prints.
func tanzuKindResource(name, state, kubeconfig string) run.Resource {
	return run.Resource{Kind: kind.ResourceKind, Name: name, Role: suites.RoleBootstrap, Kubeconfig: kubeconfig, CreatedBy: "management",
		State: state, DeleteHint: kind.DeleteHint(name), Attributes: map[string]string{"createdBy": "tanzu management-cluster create"}}
}

// markNeverCreated records a cluster the CLI failed on before its first
// marker (still validating: config, vCenter login) as gone: it made
// nothing then, and a delete through the CLI would only fail (it knows no
// such cluster) and leave the run's cleanup unfinished on a vCenter, where
// no container fallback applies.
func markNeverCreated(env *suites.Run, prefix string, r run.Resource, res *tanzu.Result, err error) {
	if err == nil || res == nil || res.BootstrapKubeconfig != "" || slices.ContainsFunc(res.Phases, func(p tanzu.Phase) bool { return p.Name != tanzu.PhasePrepare }) {
		return
	}
	if serr := env.State.SetResourceState(r.Key(), "gone"); serr != nil {
		env.Printf("%s %v", prefix, serr)
		return
	}
	env.Printf("%s %s failed before it made anything (no phase after %s): %s %s has nothing to delete", prefix, res.Command, tanzu.PhasePrepare, r.Kind, r.Name)
}
