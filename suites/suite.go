package suites

import (
	"context"
	"fmt"
	"os"

	"github.com/tkg-e2e/harness/framework/cleanup"
)

// SuiteSetup runs at the end of BeforeSuite, once NewEnv built the Env. It
// puts the run's output behind the redactor first (ProtectSecrets): defer
// RestoreOutput after RunSpecs.
func SuiteSetup(_ context.Context, env *Env) {
	if err := ProtectSecrets(env); err != nil {
		failf(env, "cannot protect the run's output from secrets: %v", err)
	}
	env.Printf("run %s: profile %s, artifacts in %s", env.State.RunID, env.Config.Profile, env.ArtifactFolder)
	env.Printf("kubeconfigs (outside the artifacts, they hold keys): %s", env.KubeconfigDir)
	if env.Resume {
		env.Printf("resuming run %s from %s", env.State.RunID, env.State.Path())
		for _, r := range env.State.Live() {
			env.Printf("[resume] state lists %s %s/%s (%s)", r.Kind, r.Namespace, r.Name, r.State)
		}
	}
}

// SuiteTeardown collects artifacts while everything still exists, then deletes
// what the run created (unless SKIP_CLEANUP=1) with the deleters the stages
// register, and proves with their leak checks that nothing is left.
func SuiteTeardown(ctx context.Context, env *Env) {
	if env.Config == nil || env.State == nil {
		return
	}
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
	if env.SkipCleanup {
		msg := fmt.Sprintf("skipped (SKIP_CLEANUP=1); delete with: make clean-run ARTIFACTS=%s", env.ArtifactFolder)
		_ = env.State.SetCleanup(msg)
		env.Printf("cleanup %s", msg)
		for _, r := range env.State.Live() {
			env.Printf("  kept %s %s/%s: %s", r.Kind, r.Namespace, r.Name, r.DeleteHint)
		}
		return
	}
	cluster, kind := env.Interval(ScopeCleanup, "delete-cluster"), env.Interval(ScopeCleanup, "delete-kind")
	in := env.Registry.Cleanup(CleanupOptions{State: env.State, ClusterTimeout: cluster.Timeout, KindTimeout: kind.Timeout,
		Interval: cluster.Poll, Progress: env.Out, Prefix: "[cleanup]"})
	if err := cleanup.All(ctx, in); err != nil {
		failf(env, "cleanup: %v\nThe state file %s lists what may remain, with the commands to delete it.", err, env.State.Path())
	}
	_ = os.RemoveAll(env.KubeconfigDir)
}
