package suites

import (
	"context"
	"errors"
	"fmt"
	"os"

	. "github.com/onsi/ginkgo/v2"

	"github.com/tkg-e2e/harness/framework/cleanup"
	"github.com/tkg-e2e/harness/framework/clusters"
	"github.com/tkg-e2e/harness/framework/vsphere"
)

// SuiteSetup runs at the end of BeforeSuite, once NewEnv built the Env. It
// puts the run's output behind the redactor first (ProtectSecrets): defer
// RestoreOutput after RunSpecs. On a profile whose clusters are CAPV VMs it
// then checks the vCenter: login (thumbprint, password) and every object of
// the placement, so a wrong value fails here, naming it, before any cluster
// exists.
func SuiteSetup(ctx context.Context, env *Env) error {
	if err := ProtectSecrets(env); err != nil {
		failf(env.Run, "cannot protect the run's output from secrets: %v", err)
	}
	env.Printf("run %s: profile %s, artifacts in %s", env.State.RunID, env.Config.Profile, env.ArtifactFolder)
	env.Printf("kubeconfigs (outside the artifacts, they hold keys): %s", env.KubeconfigDir)
	if env.Resume {
		env.Printf("resuming run %s from %s", env.State.RunID, env.State.Path())
		for _, r := range env.State.Live() {
			env.Printf("[resume] state lists %s %s/%s (%s)", r.Kind, r.Namespace, r.Name, r.State)
		}
	}
	if err := stagePreflights(ctx, env); err != nil {
		return err
	}
	if env.Config.UsesCAPV() && !env.Config.VSphere.Simulator {
		s, err := vsphereSession(ctx, env, env.Interval(ScopePreflight, "connect"))
		if err != nil {
			return fmt.Errorf("preflight: vCenter %s: %w", env.Config.VSphere.Server, err)
		}
		if _, err := s.Resolve(ctx, placementOf(env.Config)); err != nil {
			return fmt.Errorf("preflight: vCenter %s: %w\nFix: correct the vsphere section (or the VSPHERE_* variables) of the profile", env.Config.VSphere.Server, err)
		}
		env.Printf("[preflight] vCenter %s: logged in; datacenter, folder, datastore, pool and network found", env.Config.VSphere.Server)
	}
	return nil
}

// stagePreflights runs the Preflight of every stage this run will reach:
// the stages Ginkgo's label filter (make e2e FOCUS=<stages>) selects, or all
// of them on a full run. With a FOCUS regex the selection is not known by
// stage, and the stages check their input when they start.
func stagePreflights(ctx context.Context, env *Env) error {
	if env.External {
		return nil
	}
	ss, _ := reachedStages(env)
	var errs []error
	for _, s := range ss {
		if s.Preflight == nil {
			continue
		}
		if err := s.Preflight(ctx, env); err != nil {
			errs = append(errs, fmt.Errorf("preflight of stage %s: %w", s.Name, err))
		}
	}
	return errors.Join(errs...)
}

// reachedStages are the stages this run will reach, in run order: those
// Ginkgo's label filter (make e2e FOCUS=<stages>) selects, or all of them on
// a full run. known is false, and ss empty, when that is not known by
// stage: with a FOCUS or SKIP regex on spec names, or without a registry.
func reachedStages(env *Env) (ss []Stage, known bool) {
	if env.Registry == nil {
		return nil, false
	}
	if sc, _ := GinkgoConfiguration(); len(sc.FocusStrings) > 0 || len(sc.SkipStrings) > 0 {
		return nil, false
	}
	filter := GinkgoLabelFilter()
	for _, s := range env.Registry.stages {
		if filter == "" || Label(env.Registry.Labels(s.Name)...).MatchesLabelFilter(filter) {
			ss = append(ss, s)
		}
	}
	return ss, true
}

// SuiteTeardown collects artifacts while everything still exists, then deletes
// what the run created (unless SKIP_CLEANUP=1) with the deleters the stages
// register, and proves with their leak checks that nothing is left.
func SuiteTeardown(ctx context.Context, env *Env) {
	if env.Config == nil || env.State == nil {
		return
	}
	// Normally every tail was joined; after an interrupt, or a selection
	// without the join, one may still be reading a cluster cleanup deletes.
	env.stopTails("the suite is tearing down")
	env.stopWatches()
	CollectAll(ctx, env)
	env.rememberSecrets()
	defer func() {
		if err := env.Close(ctx); err != nil {
			env.Printf("closing: %v", err)
		}
	}()
	if env.External {
		return
	}
	// After the cleanup and its leak checks (even when they fail the
	// suite): the testbed goes back free only if they proved it clean.
	defer env.ReleaseLease(ctx)
	if env.SkipCleanup {
		msg := fmt.Sprintf("skipped (SKIP_CLEANUP=1); delete with: make clean-run ARTIFACTS=%s", env.ArtifactFolder)
		_ = env.State.SetCleanup(msg)
		env.Printf("cleanup %s", msg)
		for _, r := range env.State.Live() {
			env.Printf("  kept %s %s/%s: %s", r.Kind, r.Namespace, r.Name, r.DeleteHint)
		}
		return
	}
	in := env.Registry.Cleanup(env.CleanupOptions())
	if err := cleanup.All(ctx, in); err != nil {
		failf(env.Run, "cleanup: %v\nThe state file %s lists what may remain, with the commands to delete it.", err, env.State.Path())
	}
	_ = os.RemoveAll(env.KubeconfigDir)
}

// CleanupOptions are the cleanup inputs built from the config: the suite's
// teardown and `make clean-run` with a config use the same ones (a
// self-hosted management cluster as cleanup.selfHosted says, the vCenter
// leak check).
func (env *Env) CleanupOptions() CleanupOptions {
	cluster, kind := env.Interval(ScopeCleanup, "delete-cluster"), env.Interval(ScopeCleanup, "delete-kind")
	o := CleanupOptions{State: env.State, ClusterTimeout: cluster.Timeout, KindTimeout: kind.Timeout,
		Interval: cluster.Poll, Progress: env.Out, Prefix: "[cleanup]"}
	o.SelfHosted, o.SelfHostedByID, o.PrepareSelfHosted = selfHostedCleanup(env, cluster.Timeout, cluster.Poll)
	if env.Config != nil && env.Config.RemovesManagedContainers() {
		o.Managed = clusters.RemoveManaged(removedManagedByContainerID)
	}
	if env.Config != nil && !env.Config.VSphere.Simulator {
		connect := env.Interval(ScopeCleanup, "connect")
		o.VSphere = func(ctx context.Context) (*vsphere.Session, error) { return vsphereSession(ctx, env, connect) }
		o.Placement = placementOf(env.Config)
		o.DeleteTemplates = env.Config.OVA.DeleteTemplates
	}
	if env.Provisioner != nil {
		if complete := env.Provisioner.Bindings().CompleteCleanup; complete != nil {
			complete(env, &o)
		}
	}
	return o
}
