package suites

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tkg-e2e/harness/framework/cleanup"
	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/infrastructure"
	"github.com/tkg-e2e/harness/framework/kind"
	"github.com/tkg-e2e/harness/framework/node"
	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/framework/tanzu"
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

func init() {
	registerDriver(config.DriverTanzu, map[string]DriverBinding{
		"bootstrap": {Spec: tanzuBootstrapBinding, Intervals: []string{"tanzu-version"},
			Doc: "`tanzu version` answers; the kind bootstrap cluster is made by `tanzu management-cluster create` (management stage)"},
		"management": {Spec: tanzuManagementBinding, Intervals: []string{"tanzu-create"}, Kinds: []string{TanzuManagementKind},
			Cleanup: tanzuManagementCleanup,
			Doc:     "`tanzu management-cluster create`: kind, providers, the management cluster, move; kind attached as soon as announced"},
		"move": {Spec: tanzuMoveBinding,
			Doc: "the CLI's move, checked after the fact: Cluster self-hosted and unpaused, no rollout, kind gone"},
		"workload": {Spec: tanzuWorkloadBinding, Intervals: []string{"tanzu-create"}, Kinds: []string{TanzuClusterKind},
			Cleanup: tanzuCleanup, Doc: "`tanzu cluster create` from the management cluster"},
		ScopeCleanup: {Intervals: []string{"tanzu-delete"}},
	})
}

// ---- bootstrap ----

func tanzuBootstrapBinding(ctx context.Context, env func() *Env) {
	TanzuBootstrapSpec(ctx, func() TanzuBootstrapSpecInput {
		e := env()
		cli, _ := e.TanzuCLI()
		return TanzuBootstrapSpecInput{Env: e, CLI: cli, Timeout: e.Interval("bootstrap", "tanzu-version").Timeout}
	})
}

// TanzuBootstrapSpecInput is the input of TanzuBootstrapSpec.
type TanzuBootstrapSpecInput struct {
	Env     *Env
	CLI     *TanzuCLI
	Timeout time.Duration
}

func (in TanzuBootstrapSpecInput) stage() (*Env, string) { return in.Env, "bootstrap" }

func (in TanzuBootstrapSpecInput) validate() error {
	return inputErrors(in.Env, unless(in.CLI != nil, "CLI is required: the profile's driver must be tanzu (Env.TanzuCLI)"),
		unless(in.Timeout > 0, "Timeout must be positive (interval bootstrap/tanzu-version)"))
}

// TanzuBootstrapSpec checks, before anything is created, that the tanzu
// CLI runs; with the tanzu driver the kind bootstrap cluster is part of
// `tanzu management-cluster create`.
func TanzuBootstrapSpec(_ context.Context, inputGetter func() TanzuBootstrapSpecInput) {
	declareStage("checks that the tanzu CLI runs; kind is created by tanzu management-cluster create", inputGetter,
		func(input TanzuBootstrapSpecInput) StageFuncs {
			return StageFuncs{Run: func(ctx context.Context) error {
				res, err := input.CLI.Run(ctx, "version", tanzu.VersionArgs(), input.Timeout, tanzu.Hooks{}, "[bootstrap]")
				if err != nil {
					return fmt.Errorf("the tanzu CLI %s does not run: %w", input.CLI.CLI, err)
				}
				AddReportEntry("tanzu CLI", fmt.Sprintf("%s (%s)", input.CLI.CLI, res.Command))
				input.Env.Printf("[bootstrap] the tanzu CLI runs; the kind bootstrap cluster is created by `tanzu management-cluster create` in the management stage")
				return nil
			}}
		})
}

// ---- management ----

func tanzuManagementBinding(ctx context.Context, env func() *Env) {
	TanzuManagementSpec(ctx, func() TanzuManagementSpecInput {
		e := env()
		cli, _ := e.TanzuCLI()
		spec := e.Config.Clusters.Management
		return TanzuManagementSpecInput{
			TanzuManagementInput: TanzuManagementInput{Env: e, CLI: cli, Cluster: spec,
				Values:         tanzuConfigValues(e.Config, RoleManagement, spec, ""),
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
	Env *Env
	CLI *TanzuCLI
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

func (in TanzuManagementInput) validate() error { return inputErrors(in.Env, in.problems()...) }

func (in TanzuManagementInput) problems() []string {
	return []string{unless(in.CLI != nil, "CLI is required: the profile's driver must be tanzu (Env.TanzuCLI)"),
		unless(in.Cluster.Name != "", "the management cluster's name is required (clusters.management.name)"),
		unless(in.Values["CLUSTER_NAME"] == in.Cluster.Name, fmt.Sprintf("Values CLUSTER_NAME %q is not the cluster's name %q", in.Values["CLUSTER_NAME"], in.Cluster.Name)),
		unless(in.Infrastructure != nil, "Infrastructure is required (clusterctl.infrastructureProviders)"),
		unless(in.Timeout > 0, "Timeout must be positive (interval management/tanzu-create)")}
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
	if err := in.validate(); err != nil {
		return nil, fmt.Errorf("TanzuManagementCreate: %w", err)
	}
	env, name := in.Env, in.Cluster.Name
	mgmt := run.Resource{Kind: TanzuManagementKind, Name: name, Namespace: tanzuManagementNamespace, Role: RoleManagement,
		CreatedBy: "management", State: "creating", DeleteHint: in.CLI.deleteHint(tanzu.ManagementClusterDeleteArgs()),
		Attributes: map[string]string{"provider": in.Infrastructure.Name()}}
	if err := env.State.PutResource(mgmt); err != nil {
		return nil, err
	}
	cf, removeConfig, err := in.CLI.configFile(in.Values, "[management]")
	if err != nil {
		return nil, err
	}
	defer removeConfig()

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
			env.SetCluster(&Cluster{Role: RoleBootstrap, Name: kindName, Kubeconfig: path, Infrastructure: infrastructure.KindCluster})
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
			env.SetCluster(&Cluster{Role: RoleManagement, Name: name, Namespace: tanzuManagementNamespace, Kubeconfig: path, Infrastructure: in.Infrastructure})
			env.Printf("[management] management cluster %s attached (kubeconfig %s)", name, path)
		},
	}
	res, err := in.CLI.Run(ctx, "management-cluster-create", tanzu.ManagementClusterCreateArgs(cf.Path, in.CLI.Verbosity), in.Timeout, hooks, "[management]")
	wg.Wait()
	env.setTanzuResult(RoleManagement, res)
	markNeverCreated(env, "[management]", mgmt, res, err)
	if err == nil && res != nil && env.Cluster(RoleManagement) == nil {
		err = fmt.Errorf("%s passed but never said where it saved the management cluster's kubeconfig (\"Saving management cluster kubeconfig into …\"): is -v %d too low for the marker?",
			res.Command, in.CLI.Verbosity)
	}
	if err == nil && res != nil {
		mgmt.State = "ready"
		err = env.State.PutResource(mgmt)
		if hasPhase(res, tanzu.PhaseBootstrapDelete) {
			// The CLI deleted kind after the move: collecting it would fail.
			env.DropCluster(RoleBootstrap)
		}
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

func (in TanzuManagementSpecInput) stage() (*Env, string) { return in.Env, "management" }

func (in TanzuManagementSpecInput) validate() error {
	return inputErrors(in.Env, append(in.problems(), unless(in.Ready.Timeout > 0, "Ready.Timeout must be positive (interval management/wait-cluster)"))...)
}

// TanzuManagementSpec runs `tanzu management-cluster create`, reports its
// phases as the stage's steps, and checks the management cluster as the
// harness checks its own.
func TanzuManagementSpec(_ context.Context, inputGetter func() TanzuManagementSpecInput) {
	declareStage("creates the management cluster with tanzu management-cluster create", inputGetter, func(input TanzuManagementSpecInput) StageFuncs {
		env := input.Env
		return StageFuncs{
			Run: func(ctx context.Context) error {
				res, err := TanzuManagementCreate(ctx, input.TanzuManagementInput)
				if res != nil {
					reportPhases(env, "management", res, res.Phases)
				}
				if err != nil {
					return err
				}
				return tanzuClusterReady(ctx, env, "management", env.Cluster(RoleManagement), env.Cluster(RoleManagement), input.Ready)
			},
			Reattach: func(ctx context.Context) error {
				return attachTanzuCluster(ctx, env, TanzuManagementKind, RoleManagement)
			},
		}
	})
}

// ---- move ----

func tanzuMoveBinding(ctx context.Context, env func() *Env) {
	TanzuMoveSpec(ctx, func() TanzuMoveSpecInput {
		e := env()
		return TanzuMoveSpecInput{Env: e, Reconcile: e.Interval("move", "reconcile"), SettleAfter: e.Interval("move", "settle-after")}
	})
}

// TanzuMoveSpecInput is the input of TanzuMoveSpec.
type TanzuMoveSpecInput struct {
	Env *Env
	// Reconcile bounds the wait for the Machines Running with nodes and the
	// Cluster Available; SettleAfter is how long they must then stay the
	// same (move/reconcile, move/settle-after).
	Reconcile, SettleAfter config.Interval
}

func (in TanzuMoveSpecInput) stage() (*Env, string) { return in.Env, "move" }

func (in TanzuMoveSpecInput) validate() error {
	return inputErrors(in.Env, unless(in.Reconcile.Timeout > 0, "Reconcile.Timeout must be positive (interval move/reconcile)"))
}

// TanzuMoveSpec checks the move `tanzu management-cluster create` did.
func TanzuMoveSpec(_ context.Context, inputGetter func() TanzuMoveSpecInput) {
	declareStage("checks the move tanzu management-cluster create did", inputGetter, func(input TanzuMoveSpecInput) StageFuncs {
		env := input.Env
		return StageFuncs{
			Run: func(ctx context.Context) error {
				res := env.tanzuResult(RoleManagement)
				phases, err := tanzuMovePhases(res)
				if len(phases) > 0 {
					reportPhases(env, "move", res, phases)
				}
				if err != nil {
					return err
				}
				to := env.Cluster(RoleManagement)
				if to == nil {
					return errNoCluster(RoleManagement)
				}
				if err := tanzuNoRollout(ctx, env, to, input.Reconcile, input.SettleAfter); err != nil {
					return err
				}
				return tanzuBootstrapGone(ctx, env, kindContainersGone)
			},
			Reattach: func(ctx context.Context) error { return nil },
		}
	})
}

// tanzuMovePhases are the move's phases of the management create, or an
// error when the CLI's output shows no move. Nil without an error when
// the management stage was re-attached (RESUME=1): its transcript is the
// kept run's.
func tanzuMovePhases(res *tanzu.Result) ([]tanzu.Phase, error) {
	if res == nil {
		return nil, nil
	}
	var phases []tanzu.Phase
	for _, p := range res.Phases {
		if p.Name == tanzu.PhaseMovePrepare || p.Name == tanzu.PhaseMove || p.Name == tanzu.PhaseBootstrapDelete {
			phases = append(phases, p)
		}
	}
	if !hasPhase(res, tanzu.PhaseMove) {
		return phases, fmt.Errorf("%s passed but its output shows no move (\"Moving all Cluster API objects from bootstrap cluster to management cluster...\"); phases: %s",
			res.Command, phaseNames(res.Phases))
	}
	return phases, nil
}

// kindContainersGone fails when a container of the kind cluster is left.
func kindContainersGone(ctx context.Context, name string) error {
	cs, err := node.ListCluster(ctx, name)
	if err != nil {
		return err
	}
	if len(cs) > 0 {
		var names []string
		for _, c := range cs {
			names = append(names, c.Name)
		}
		return fmt.Errorf("the tanzu CLI left the kind bootstrap cluster %s's containers after the move: %s", name, strings.Join(names, ", "))
	}
	return nil
}

// tanzuBootstrapGone checks that every kind cluster the management create
// announced is gone, and marks it deleted in the run state.
func tanzuBootstrapGone(ctx context.Context, env *Env, gone func(ctx context.Context, name string) error) error {
	var errs []error
	for _, r := range env.State.Live() {
		if r.Kind != kind.ResourceKind || r.CreatedBy != "management" {
			continue
		}
		if err := gone(ctx, r.Name); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := env.State.SetResourceState(r.Key(), "deleted"); err != nil {
			errs = append(errs, err)
		}
		env.Printf("[move] the kind bootstrap cluster %s is gone, as the CLI said", r.Name)
	}
	env.DropCluster(RoleBootstrap)
	return errors.Join(errs...)
}

// ---- workload ----

func tanzuWorkloadBinding(ctx context.Context, env func() *Env) {
	TanzuWorkloadSpec(ctx, func() TanzuWorkloadSpecInput {
		e := env()
		cli, _ := e.TanzuCLI()
		spec := e.Config.Clusters.Workload
		return TanzuWorkloadSpecInput{Env: e, CLI: cli, Cluster: spec, Values: tanzuConfigValues(e.Config, RoleWorkload, spec, spec.Namespace),
			Infrastructure: e.Config.Infrastructure(), Timeout: e.Interval("workload", "tanzu-create").Timeout,
			WaitAPI: e.Interval("workload", "wait-api"), Ready: e.Interval("workload", "wait-cluster")}
	})
}

// TanzuWorkloadSpecInput is the input of TanzuWorkloadSpec.
type TanzuWorkloadSpecInput struct {
	Env     *Env
	CLI     *TanzuCLI
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

func (in TanzuWorkloadSpecInput) stage() (*Env, string) { return in.Env, "workload" }

func (in TanzuWorkloadSpecInput) validate() error {
	return inputErrors(in.Env, unless(in.CLI != nil, "CLI is required: the profile's driver must be tanzu (Env.TanzuCLI)"),
		unless(in.Cluster.Name != "" && in.Cluster.Namespace != "", "the workload cluster's name and namespace are required (clusters.workload)"),
		unless(in.Infrastructure != nil, "Infrastructure is required (clusterctl.infrastructureProviders)"),
		unless(in.Timeout > 0 && in.WaitAPI.Timeout > 0 && in.Ready.Timeout > 0, "Timeout, WaitAPI and Ready must be positive (intervals workload/tanzu-create, wait-api, wait-cluster)"))
}

// TanzuWorkloadSpec runs `tanzu cluster create`, attaches the cluster
// from its Cluster API kubeconfig Secret, and checks it.
func TanzuWorkloadSpec(_ context.Context, inputGetter func() TanzuWorkloadSpecInput) {
	declareStage("creates the workload cluster with tanzu cluster create", inputGetter, func(input TanzuWorkloadSpecInput) StageFuncs {
		env := input.Env
		return StageFuncs{
			Run: func(ctx context.Context) error {
				mgmt := env.Cluster(RoleManagement)
				if mgmt == nil {
					return errNoCluster(RoleManagement)
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
				return tanzuClusterReady(ctx, env, "workload", mgmt, env.Cluster(RoleWorkload), input.Ready)
			},
			Reattach: func(ctx context.Context) error { return attachTanzuCluster(ctx, env, TanzuClusterKind, RoleWorkload) },
		}
	})
}

// TanzuClusterCreate runs `tanzu cluster create` with its own cluster
// configuration file, the cluster recorded in the run state first.
func TanzuClusterCreate(ctx context.Context, in TanzuWorkloadSpecInput) (*tanzu.Result, error) {
	if err := in.validate(); err != nil {
		return nil, fmt.Errorf("TanzuClusterCreate: %w", err)
	}
	env, name := in.Env, in.Cluster.Name
	r := run.Resource{Kind: TanzuClusterKind, Name: name, Namespace: in.Cluster.Namespace, Role: RoleWorkload,
		Kubeconfig: env.KubeconfigPath(name), CreatedBy: "workload", State: "creating",
		DeleteHint: in.CLI.deleteHint(tanzu.ClusterDeleteArgs(name, in.Cluster.Namespace)), Attributes: map[string]string{"provider": in.Infrastructure.Name()}}
	if err := env.State.PutResource(r); err != nil {
		return nil, err
	}
	cf, removeConfig, err := in.CLI.configFile(in.Values, "[workload]")
	if err != nil {
		return nil, err
	}
	defer removeConfig()
	res, err := in.CLI.Run(ctx, "cluster-create-"+name, tanzu.ClusterCreateArgs(cf.Path, in.CLI.Verbosity), in.Timeout, tanzu.Hooks{}, "[workload]")
	env.setTanzuResult(RoleWorkload, res)
	markNeverCreated(env, "[workload]", r, res, err)
	if err == nil && res != nil {
		r.State = "ready"
		err = env.State.PutResource(r)
	}
	return res, err
}

// tanzuKindResource is the run state's record of the kind cluster
// `tanzu management-cluster create` makes: first by the name it announces,
// then ready with the kubeconfig it prints.
func tanzuKindResource(name, state, kubeconfig string) run.Resource {
	return run.Resource{Kind: kind.ResourceKind, Name: name, Role: RoleBootstrap, Kubeconfig: kubeconfig, CreatedBy: "management",
		State: state, DeleteHint: kind.DeleteHint(name), Attributes: map[string]string{"createdBy": "tanzu management-cluster create"}}
}

// markNeverCreated records a cluster the CLI failed on before its first
// marker (still validating: config, vCenter login) as gone: it made
// nothing then, and a delete through the CLI would only fail (it knows no
// such cluster) and leave the run's cleanup unfinished on a vCenter, where
// no container fallback applies.
func markNeverCreated(env *Env, prefix string, r run.Resource, res *tanzu.Result, err error) {
	if err == nil || res == nil || res.BootstrapKubeconfig != "" || slices.ContainsFunc(res.Phases, func(p tanzu.Phase) bool { return p.Name != tanzu.PhasePrepare }) {
		return
	}
	if serr := env.State.SetResourceState(r.Key(), "gone"); serr != nil {
		env.Printf("%s %v", prefix, serr)
		return
	}
	env.Printf("%s %s failed before it made anything (no phase after %s): %s %s has nothing to delete", prefix, res.Command, tanzu.PhasePrepare, r.Kind, r.Name)
}

// ---- cleanup ----

// tanzuCleanup deletes what the tanzu CLI made with the CLI: workload
// clusters first (cleanup runs in reverse creation order), then the
// management cluster; the leak checks look for their node containers.
func tanzuCleanup(o CleanupOptions) StageCleanup {
	del := func(args func(r run.Resource) []string) cleanup.Deleter {
		return func(ctx context.Context, r run.Resource) (string, error) {
			if o.Tanzu == nil || o.TanzuTimeout <= 0 {
				return "", fmt.Errorf("no tanzu CLI to delete %s with: clean up with the run's config (driver: tanzu), or by hand: %s", r.Key(), r.DeleteHint)
			}
			name := "delete-" + r.Name
			if r.Kind == TanzuManagementKind {
				name = "management-cluster-delete"
			}
			res, err := o.Tanzu.Run(ctx, name, args(r), o.TanzuTimeout, tanzu.Hooks{}, o.Prefix)
			if err == nil {
				return res.Command, nil // cleanup adds the time
			}
			// The CLI cannot delete what it never finished making (a create
			// that failed before it saved the management cluster). CAPD's
			// nodes are containers: remove the run's by ID, as the clusterctl
			// deleter does when the holder does not answer; the leak checks
			// then say whether anything is left. Elsewhere (VMs) the error
			// stands, with the hint to delete by hand.
			if !infrastructure.Parse(r.Attributes["provider"]).NodesAreContainers() || ctx.Err() != nil {
				return "", err
			}
			why := err.Error()
			var ce *TanzuCommandError
			if errors.As(err, &ce) {
				why = ce.Failure.Error()
			}
			s, until := cleanup.RunOf(ctx)
			removed, leftAlone, rerr := node.RemoveOwned(ctx, r, node.IdentityOf(s, until))
			if rerr != nil {
				return "", errors.Join(err, rerr)
			}
			how := fmt.Sprintf("the CLI could not delete it (%s); removed the run's %d containers by ID (%s)", why, len(removed), strings.Join(removed, ", "))
			if len(leftAlone) > 0 {
				how += "; " + strings.Join(leftAlone, "; ")
			}
			return how, nil
		}
	}
	return StageCleanup{Deleters: map[string]cleanup.Deleter{
		TanzuClusterKind:    del(func(r run.Resource) []string { return tanzu.ClusterDeleteArgs(r.Name, r.Namespace) }),
		TanzuManagementKind: del(func(run.Resource) []string { return tanzu.ManagementClusterDeleteArgs() }),
	}}
}

// tanzuManagementCleanup is tanzuCleanup with the leak checks of every
// cluster the CLI made (once for the run, as the management stage carries
// the clusterctl driver's vCenter check).
func tanzuManagementCleanup(o CleanupOptions) StageCleanup {
	sc := tanzuCleanup(o)
	sc.LeakChecks = []cleanup.LeakCheck{node.LeakCheck(TanzuManagementKind, TanzuClusterKind)}
	if o.VSphere != nil {
		// CAPV's VMs, which the Docker checks cannot see.
		sc.LeakChecks = append(sc.LeakChecks, vcenterLeakCheck(o, TanzuManagementKind, TanzuClusterKind))
	}
	return sc
}

// ---- shared ----

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
