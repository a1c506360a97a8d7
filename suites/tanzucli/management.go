package tanzucli

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/infrastructure"
	"github.com/tkg-e2e/harness/framework/kind"
	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/framework/tanzu"
	"github.com/tkg-e2e/harness/suites"
)

// This file is the management stage with the tanzu driver: `tanzu management-cluster create`, which also makes and deletes kind and moves the cluster into itself.

func tanzuManagementBinding(ctx context.Context, env func() *suites.Env) {
	TanzuManagementSpec(ctx, func() TanzuManagementSpecInput {
		e := env()
		cli, _ := CLIOf(e)
		spec := e.Config.Clusters.Management
		return TanzuManagementSpecInput{
			TanzuManagementInput: TanzuManagementInput{Env: e, CLI: cli, Cluster: spec,
				Values:         tanzuConfigValues(e.Config, suites.RoleManagement, spec, ""),
				Infrastructure: e.Config.Infrastructure(), Timeout: e.Interval("management", "tanzu-create").Timeout,
				RecordKind: func(ctx context.Context, name string) error {
					_, err := kind.RecordContainers(ctx, e.State, name)
					return err
				}},
			Ready: e.Interval("management", "wait-cluster"),
		}
	})
}

// TanzuManagementInput is the input of TanzuManagementCreate.
type TanzuManagementInput struct {
	Env *suites.Env
	CLI *CLI
	// Cluster is the management cluster (clusters.management).
	Cluster config.WorkloadCluster
	// Values are the cluster configuration file's variables (tanzuConfigValues).
	Values map[string]string
	// Infrastructure is where the management cluster's nodes run.
	Infrastructure infrastructure.Infrastructure
	// Timeout bounds the command (interval management/tanzu-create).
	Timeout time.Duration
	// RecordKind records the kind cluster's node containers in the run
	// state once the CLI announced it, so cleanup removes exactly those
	// (kind.RecordContainers). Nil skips it (tests without Docker).
	RecordKind func(ctx context.Context, name string) error
}

func (in TanzuManagementInput) Validate() error { return suites.InputErrors(in.Env, in.problems()...) }

func (in TanzuManagementInput) problems() []string {
	return []string{suites.Unless(in.CLI != nil, "CLI is required: the profile's driver must be tanzu (tanzucli.CLIOf)"),
		suites.Unless(in.Cluster.Name != "", "the management cluster's name is required (clusters.management.name)"),
		suites.Unless(in.Values["CLUSTER_NAME"] == in.Cluster.Name, fmt.Sprintf("Values CLUSTER_NAME %q is not the cluster's name %q", in.Values["CLUSTER_NAME"], in.Cluster.Name)),
		suites.Unless(in.Infrastructure != nil, "Infrastructure is required (clusterctl.infrastructureProviders)"),
		suites.Unless(in.Timeout > 0, "Timeout must be positive (interval management/tanzu-create)")}
}

// TanzuManagementCreate runs `tanzu management-cluster create` with a
// cluster configuration file written for it (0600, outside the artifacts,
// removed when the command ends). The run state records the management
// cluster before the command starts, and the kind cluster as soon as the
// CLI announces it; the Env gets the kind cluster then, and the management
// cluster when the CLI saves its kubeconfig. Once the CLI deleted kind
// (after the move), the Env drops it. The Result is returned whenever the
// command ran, failed or not.
func TanzuManagementCreate(ctx context.Context, in TanzuManagementInput) (*tanzu.Result, error) {
	if err := in.Validate(); err != nil {
		return nil, fmt.Errorf("TanzuManagementCreate: %w", err)
	}
	env, name := in.Env, in.Cluster.Name
	mgmt := run.Resource{Kind: TanzuManagementKind, Name: name, Namespace: tanzuManagementNamespace, Role: suites.RoleManagement,
		CreatedBy: "management", State: "creating", DeleteHint: in.CLI.deleteHint(tanzu.ManagementClusterDeleteArgs()),
		Attributes: map[string]string{"provider": in.Infrastructure.Name()}}
	var mu sync.Mutex
	var hookErrs []error
	var wg sync.WaitGroup
	hookErr := func(err error) {
		env.Printf("[management] %v", err)
		mu.Lock()
		hookErrs = append(hookErrs, err)
		mu.Unlock()
	}
	announced := ""
	hooks := tanzu.Hooks{
		// Hooks run on the goroutine that reads the CLI's output: what is
		// done here is quick (a state write, an Env entry); listing Docker
		// containers goes to a goroutine of its own.
		OnBootstrapName: func(kindName string) {
			// Recorded before kind makes a container: a CLI killed while
			// kind works leaves containers only this name (and the run's
			// time window) can claim for cleanup.
			if err := env.State.PutResource(tanzuKindResource(kindName, "creating", "")); err != nil {
				hookErr(err)
				return
			}
			announced = kindName
		},
		OnBootstrapKubeconfig: func(path string) {
			kindName, err := kindClusterName(path)
			if err != nil {
				hookErr(fmt.Errorf("the CLI announced the bootstrap cluster's kubeconfig %s, but: %w", path, err))
				return
			}
			if announced != "" && announced != kindName {
				hookErr(fmt.Errorf("the CLI said it creates the kind cluster %s, but its kubeconfig %s is kind-%s's", announced, path, kindName))
			}
			if err := env.State.PutResource(tanzuKindResource(kindName, "ready", path)); err != nil {
				hookErr(err)
			}
			env.SetCluster(&suites.Cluster{Role: suites.RoleBootstrap, Name: kindName, Kubeconfig: path, Infrastructure: infrastructure.KindCluster})
			env.Printf("[management] kind bootstrap cluster %s attached (kubeconfig %s)", kindName, path)
			if in.RecordKind != nil {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := in.RecordKind(context.WithoutCancel(ctx), kindName); err != nil {
						hookErr(fmt.Errorf("recording the kind cluster %s's containers: %w", kindName, err))
					}
				}()
			}
		},
		OnManagementKubeconfig: func(path string) {
			mgmt.Kubeconfig = path
			if err := env.State.PutResource(mgmt); err != nil {
				hookErr(err)
			}
			env.SetCluster(&suites.Cluster{Role: suites.RoleManagement, Name: name, Namespace: tanzuManagementNamespace, Kubeconfig: path, Infrastructure: in.Infrastructure})
			env.Printf("[management] management cluster %s attached (kubeconfig %s)", name, path)
		},
	}
	res, err := runCreate(ctx, createCommand{Env: env, CLI: in.CLI, Resource: &mgmt, Values: in.Values, Stage: "management",
		Name: "management-cluster-create", Args: func(cf string) []string { return tanzu.ManagementClusterCreateArgs(cf, in.CLI.Verbosity) },
		Timeout: in.Timeout, Hooks: hooks, Wait: wg.Wait,
		Passed: func(res *tanzu.Result) error {
			if env.Cluster(suites.RoleManagement) == nil {
				return fmt.Errorf("%s passed but never said where it saved the management cluster's kubeconfig (\"Saving management cluster kubeconfig into …\"): is -v %d too low for the marker?",
					res.Command, in.CLI.Verbosity)
			}
			return nil
		}})
	if err == nil && hasPhase(res, tanzu.PhaseBootstrapDelete) {
		// The CLI deleted kind after the move: collecting it would fail.
		env.DropCluster(suites.RoleBootstrap)
	}
	mu.Lock()
	defer mu.Unlock()
	return res, errors.Join(append([]error{err}, hookErrs...)...)
}

// TanzuManagementSpecInput is the input of TanzuManagementSpec.
type TanzuManagementSpecInput struct {
	TanzuManagementInput
	// Ready bounds the harness's own check after the CLI: the Cluster
	// Available, every Machine Running with a node (management/wait-cluster).
	Ready config.Interval
}

func (in TanzuManagementSpecInput) StageOf() (*suites.Env, string) { return in.Env, "management" }

func (in TanzuManagementSpecInput) Validate() error {
	return suites.InputErrors(in.Env, append(in.problems(), suites.Unless(in.Ready.Timeout > 0, "Ready.Timeout must be positive (interval management/wait-cluster)"))...)
}

// TanzuManagementSpec runs `tanzu management-cluster create`, reports its
// phases as the stage's steps, and checks the management cluster as the
// harness checks its own.
func TanzuManagementSpec(_ context.Context, inputGetter func() TanzuManagementSpecInput) {
	suites.DeclareStage("creates the management cluster with tanzu management-cluster create", inputGetter, func(input TanzuManagementSpecInput) suites.StageFuncs {
		env := input.Env
		return suites.StageFuncs{
			Run: func(ctx context.Context) error {
				res, err := TanzuManagementCreate(ctx, input.TanzuManagementInput)
				if res != nil {
					reportPhases(env, "management", res, res.Phases)
				}
				if err != nil {
					return err
				}
				return tanzuClusterReady(ctx, env.Run, "management", env.Cluster(suites.RoleManagement), env.Cluster(suites.RoleManagement), input.Ready)
			},
			Reattach: func(ctx context.Context) error {
				return attachTanzuCluster(ctx, env, TanzuManagementKind, suites.RoleManagement)
			},
		}
	})
}
