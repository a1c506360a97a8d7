package suites

import (
	"context"
	"fmt"
	"os"

	. "github.com/onsi/ginkgo/v2"

	"github.com/tkg-e2e/harness/framework/cleanup"
	"github.com/tkg-e2e/harness/framework/clusters"
	"github.com/tkg-e2e/harness/framework/kind"
	"github.com/tkg-e2e/harness/framework/node"
	"github.com/tkg-e2e/harness/framework/vsphere"
)

// SuiteSetup runs at the end of BeforeSuite, once the config and state are loaded.
func SuiteSetup(ctx context.Context, env *Env) {
	if err := os.MkdirAll(KubeconfigDir(env), 0o700); err != nil {
		Fail(fmt.Sprintf("cannot create the kubeconfig folder %s: %v", KubeconfigDir(env), err))
	}
	env.Printf("kubeconfigs (outside the artifacts, they hold keys): %s", KubeconfigDir(env))
	if env.Resume {
		for _, r := range env.State.Live() {
			env.Printf("[resume] state lists %s %s/%s (%s)", r.Kind, r.Namespace, r.Name, r.State)
		}
	}
}

// SuiteTeardown collects artifacts while everything still exists, then deletes
// what the run created (unless SKIP_CLEANUP=1) and proves nothing is left.
func SuiteTeardown(ctx context.Context, env *Env) {
	if env.Config == nil || env.State == nil {
		return
	}
	CollectAll(ctx, env)
	env.Set(envScanSecrets, runSecrets(env))
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
	if env.Config.VSphere.Simulator {
		// Templates imported into vcsim live in this process and end with it.
		for _, r := range env.State.Live() {
			if r.Kind == vsphere.ResourceKind {
				_ = env.State.SetResourceState(r.Key(), "deleted")
			}
		}
	}
	iv := env.Config.MustInterval("cleanup", "wait-delete")
	if err := cleanup.All(ctx, cleanup.Input{State: env.State, Progress: env.Out, Prefix: "[cleanup]",
		Deleters: map[string]cleanup.Deleter{
			kind.ResourceKind:     kind.Deleter(iv.Timeout, env.Out, "[cleanup]"),
			clusters.ResourceKind: clusters.Deleter(iv.Timeout, iv.Poll, env.Out, "[cleanup]"),
		},
		LeakChecks: []cleanup.LeakCheck{node.LeakCheck(kind.ResourceKind, clusters.ResourceKind), kind.LeakCheck(kind.ResourceKind, clusters.ResourceKind)},
	}); err != nil {
		Fail(fmt.Sprintf("cleanup: %v\nThe state file %s lists what may remain, with the commands to delete it.", err, env.State.Path()))
	}
	_ = os.RemoveAll(KubeconfigDir(env))
}
