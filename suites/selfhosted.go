package suites

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tkg-e2e/harness/framework/bootstrap"
	"github.com/tkg-e2e/harness/framework/cleanup"
	"github.com/tkg-e2e/harness/framework/clusters"
	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/kind"
	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/move"
	"github.com/tkg-e2e/harness/framework/run"
)

// removedByContainerID is the note cleanup's "how" carries for a
// self-hosted management cluster whose containers were removed because the
// profile says so, so the log explains the choice.
const removedByContainerID = "by container ID because cleanup.selfHosted is " + config.SelfHostedRemoveContainers +
	"; " + config.SelfHostedMoveBack + " would delete it through a throw-away kind cluster"

// removedStageByContainerID is the note for a day-two stage's own
// self-hosted management cluster (cleanup.stageSelfHosted).
const removedStageByContainerID = "by container ID because cleanup.stageSelfHosted is " + config.SelfHostedRemoveContainers +
	"; the run's own management cluster proves the move-back"

// removedManagedByContainerID is the same note for a cluster a management
// cluster manages (cleanup.managed: removeContainers).
const removedManagedByContainerID = "by container ID because cleanup.managed is " + config.ManagedRemoveContainers +
	"; " + config.ManagedDelete + " would delete it through its management cluster"

// selfHostedCleanup is how cleanup deletes a self-hosted management cluster,
// as cleanup.selfHosted says: moveBack (selfHostedDeleter, every provider)
// or removeContainers (the run's recorded containers by ID; validation
// allows it only when every infrastructure provider is docker). byID says
// which of the two it is (CleanupOptions.SelfHostedByID); prepare starts
// moveBack's throw-away kind cluster ahead (CleanupOptions.PrepareSelfHosted).
//
// A day-two stage's own self-hosted management cluster goes as
// cleanup.stageSelfHosted says (stageCluster): CI moves the run's own one
// back and removes the stage's by ID, which spares a second move-back of
// the same path (75-89 s measured).
func selfHostedCleanup(env *Env, deleteTimeout, poll time.Duration) (f clusters.SelfHostedFunc, byID bool,
	prepare func(context.Context, []run.Resource) (func(), []string)) {
	own, stage := false, false
	if env.Config != nil {
		own, stage = env.Config.RemovesSelfHostedContainers(), env.Config.RemovesStageSelfHostedContainers()
	}
	remove, removeStage := clusters.RemoveContainers(removedByContainerID), clusters.RemoveContainers(removedStageByContainerID)
	if own && stage {
		return remove, true, nil
	}
	movesBack := func(r run.Resource) bool {
		if stageCluster(r) {
			return !stage
		}
		return !own
	}
	t := env.teardownCluster()
	t.movesBack = movesBack
	back := selfHostedDeleter(env.Run, t, deleteTimeout, poll)
	return func(ctx context.Context, r run.Resource) (string, error) {
		if movesBack(r) {
			return back(ctx, r)
		}
		if stageCluster(r) {
			return removeStage(ctx, r)
		}
		return remove(ctx, r)
	}, false, t.prepare
}

// stageCluster says r is a cluster a day-two stage made for itself: its
// ID is not its role's (the run's own management cluster records none).
func stageCluster(r run.Resource) bool { return r.Role == RoleManagement && r.Cluster != "" }

// selfHostedDeleter deletes a self-hosted management cluster as `tanzu
// management-cluster delete` does, on every provider: a throw-away kind
// bootstrap cluster with the run's providers, `clusterctl move` back into it,
// then a Cluster API delete there, then the kind cluster goes. A management
// cluster cannot delete itself, and removing its containers by label only
// exists for CAPD (on vSphere it would leave every VM running).
func selfHostedDeleter(env *Run, t *teardownCluster, deleteTimeout, poll time.Duration) clusters.SelfHostedFunc {
	return func(ctx context.Context, r run.Resource) (string, error) {
		env.Printf("[cleanup] %s is self-hosted: moving it back into a throw-away kind cluster %s to delete it there", r.Key(), t.name())
		t.start(ctx)
		defer t.doneWith()
		if err := t.wait(ctx); err != nil {
			return "", fmt.Errorf("creating the throw-away bootstrap cluster %s to move %s back into: %w", t.name(), r.Key(), err)
		}
		if err := move.Pivot(ctx, move.PivotInput{FromKubeconfig: r.Kubeconfig, ToKubeconfig: t.kubeconfig(), Namespace: r.Namespace,
			ClusterctlConfigPath: env.ClusterctlConfig(""), Timeout: deleteTimeout, Progress: env.Out, Prefix: "[cleanup]"}); err != nil {
			return "", err
		}
		k, err := kube.Connect(t.kubeconfig())
		if err != nil {
			return "", err
		}
		if err := clusters.Delete(ctx, clusters.DeleteInput{Management: k, Namespace: r.Namespace, Name: r.Name,
			Timeout: deleteTimeout, Interval: poll, Progress: env.Out, Prefix: "[cleanup]"}); err != nil {
			return "", fmt.Errorf("deleting %s through the throw-away bootstrap cluster %s: %w", r.Key(), t.name(), err)
		}
		return fmt.Sprintf("moved back into throw-away kind cluster %s and deleted there", t.name()), nil
	}
}

// teardownCluster is the throw-away kind bootstrap cluster of a move-back,
// one per run (Env.teardownCluster). Cleanup starts it before its first
// deletion when a self-hosted management cluster is among the live
// resources (prepare), so that its ~55-90 s of kind create and clusterctl
// init run while the workload cluster is deleted through the management
// cluster, not after; the move-back then only moves and deletes. When
// nothing would be deleted before the move-back (make e2e FOCUS=move), the
// move stage starts it as the move begins (startTeardownAtMove). The
// deleter starts it itself when nothing did (a half-moved cluster found at
// cleanup time).
type teardownCluster struct {
	env           *Env
	deleteTimeout time.Duration
	// early: the move stage started it, before cleanup; stopEarly ends
	// the context it was started with once it is deleted.
	early     bool
	stopEarly func()

	once sync.Once
	done chan struct{}
	err  error
	// runCtx carries the run (cleanup.RunOf) for the delete in release:
	// the kind deleter removes only what it can tell is the run's.
	runCtx      context.Context
	releaseOnce sync.Once
	// pending counts the self-hosted clusters prepare found (a run can
	// have two: its own and the management-upgrade stage's): the kind
	// cluster goes once the last of them is moved back into it.
	pending atomic.Int32
	// movesBack says which self-hosted clusters come through here (the
	// others have their containers removed); nil: all of them.
	movesBack func(run.Resource) bool
}

// doneWith is one move-back finished: the last one releases the cluster
// (and a deleter that started it itself, nothing having prepared it).
func (t *teardownCluster) doneWith() {
	if t.pending.Add(-1) <= 0 {
		t.release()
	}
}

func (t *teardownCluster) name() string {
	return teardownKindName(t.env.Config.Clusters.Bootstrap.Name)
}

func (t *teardownCluster) kubeconfig() string { return t.env.KubeconfigPath(t.name()) }

// prepare is cleanup.Input.Prepare: start the cluster if a self-hosted
// management cluster is to be deleted. A cluster the move stage started is
// the release's to delete, used or not (owned): cleanup would otherwise
// delete it first, as the newest resource, before the move-back it is for.
func (t *teardownCluster) prepare(ctx context.Context, live []run.Resource) (func(), []string) {
	if t.env.Config == nil {
		return nil, nil
	}
	var selfHosted []string
	for _, r := range live {
		if r.Kind == clusters.ResourceKind && r.Attributes[clusters.AttrSelfHosted] == "true" && (t.movesBack == nil || t.movesBack(r)) {
			selfHosted = append(selfHosted, r.Key())
		}
	}
	t.pending.Store(int32(len(selfHosted)))
	if t.early {
		// Deleted as cleanup's run: RunOf's end is cleanup's, not the move's.
		t.runCtx = context.WithoutCancel(ctx)
		if len(selfHosted) > 0 {
			t.env.Printf("[cleanup] the throw-away kind cluster %s for the move back of %s was started with the move", t.name(),
				strings.Join(selfHosted, " and "))
		}
		return t.release, []string{run.Resource{Kind: kind.ResourceKind, Name: t.name()}.Key()}
	}
	if len(selfHosted) == 0 {
		return nil, nil
	}
	t.env.Printf("[cleanup] creating the throw-away kind cluster %s for the move back of %s now, while the deletions before it run",
		t.name(), strings.Join(selfHosted, " and "))
	t.start(ctx)
	return t.release, nil
}

// teardownAtMove says whether the move stage starts the move-back's
// throw-away kind cluster as the move begins: the run cleans up (not
// SKIP_CLEANUP, not make verify), moves its own management cluster back
// (cleanup.selfHosted: moveBack), and reaches no stage after the move that
// makes anything, so the move-back will be cleanup's first deletion and
// nothing else would run beside the kind create and clusterctl init (about
// 55 s of the 118 s move-back measured with make e2e FOCUS=move on 2 cores,
// 2026-11-28). With a workload cluster, cleanup's prepare already hides
// them behind its delete, and a cluster started at the move would idle
// beside every later stage.
func teardownAtMove(env *Env) bool {
	ss, known := reachedStages(env)
	return teardownAtMoveOf(env, ss, known)
}

// teardownAtMoveOf is teardownAtMove for the stages ss the run reaches
// (known: reachedStages).
func teardownAtMoveOf(env *Env, ss []Stage, known bool) bool {
	if env.Config == nil || env.State == nil || env.SkipCleanup || env.External || env.Config.RemovesSelfHostedContainers() {
		return false
	}
	return known && NothingMadeAfterMove(ss)
}

// NothingMadeAfterMove says the stages ss (in run order) reach the move and
// none after it records a resource: a move-back would be cleanup's first
// deletion (harness plan says so too).
func NothingMadeAfterMove(ss []Stage) bool {
	moved := false
	for _, s := range ss {
		if moved && len(s.Kinds) > 0 {
			return false
		}
		moved = moved || s.Name == "move" // not Move.Name: Move's spec calls this, an initialization cycle
	}
	return moved
}

// startTeardownAtMove starts the throw-away kind cluster when teardownAtMove
// says so. Its context is the run's, not the stage's (which ends with the
// stage's spec): it ends when the lease is lost, and the cleanup releases
// the cluster even when the move fails.
func startTeardownAtMove(env *Env) {
	if !teardownAtMove(env) {
		return
	}
	t := env.teardownCluster()
	ctx, stop := env.stageContext(context.Background())
	t.early, t.stopEarly = true, stop
	env.Printf("[move] creating the throw-away kind cluster %s for cleanup's move-back now, beside the move: no stage after the move makes anything, so the move-back is cleanup's first deletion",
		t.name())
	t.start(cleanup.WithRun(ctx, env.State))
}

// start creates the cluster in the background, once.
func (t *teardownCluster) start(ctx context.Context) {
	t.once.Do(func() {
		t.done = make(chan struct{})
		t.runCtx = context.WithoutCancel(ctx)
		cfg, env := t.env.Config, t.env
		go func() {
			defer close(t.done)
			// Bootstrap records the kind cluster in the run state first: if
			// anything fails, release, cleanup and the leak checks still see it.
			_, t.err = bootstrap.Bootstrap(ctx, bootstrap.Input{Name: t.name(), NodeImage: cfg.Clusters.Bootstrap.NodeImage,
				KubeconfigPath: t.kubeconfig(), Images: images(cfg, RoleBootstrap), ClusterctlConfigPath: env.ClusterctlConfig(""),
				Providers: providersOf(cfg), State: env.State, CreatedBy: "cleanup", Timeouts: bootstrapTimeouts(env.Run),
				Progress: env.Out, Prefix: "[cleanup]"})
		}()
	})
}

// wait returns once the cluster is ready or failed, or ctx ends.
func (t *teardownCluster) wait(ctx context.Context) error {
	select {
	case <-t.done:
		return t.err
	case <-ctx.Done():
		return fmt.Errorf("interrupted: %w", context.Cause(ctx))
	}
}

// release deletes the cluster once it is no longer being created: after the
// move-back, or at the end of cleanup when nothing used it. Later calls do
// nothing.
func (t *teardownCluster) release() { t.releaseOnce.Do(t.deleteCluster) }

func (t *teardownCluster) deleteCluster() {
	if t.done == nil {
		return
	}
	<-t.done // a create interrupted by ctx returns promptly
	if t.stopEarly != nil {
		defer t.stopEarly()
	}
	name := t.name()
	key := run.Resource{Kind: kind.ResourceKind, Name: name}.Key()
	if r, ok := t.env.State.Resource(kind.ResourceKind, name); !ok || r.State == "deleted" {
		return
	}
	del := kind.Deleter(t.deleteTimeout, t.env.Out, "[cleanup]")
	start := time.Now()
	how, err := del(t.runCtx, run.Resource{Kind: kind.ResourceKind, Name: name, Kubeconfig: t.kubeconfig()})
	if err != nil {
		t.env.Printf("[cleanup] deleting the throw-away kind cluster %s: %v", name, err)
		return
	}
	t.env.Printf("[cleanup] throw-away kind cluster %s: %s in %s", name, how, time.Since(start).Round(100*time.Millisecond))
	_ = t.env.State.MarkDeleted(key, how, time.Since(start))
}

// teardownCluster is the run's throw-away kind cluster for move-backs,
// shared by the move stage and the cleanup.
func (e *Env) teardownCluster() *teardownCluster {
	timeout := e.Interval(ScopeCleanup, "delete-cluster").Timeout
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.teardown == nil {
		e.teardown = &teardownCluster{env: e, deleteTimeout: timeout}
	}
	return e.teardown
}

// teardownKindName is the throw-away bootstrap cluster's name, within kind's
// name limit.
func teardownKindName(bootstrapName string) string {
	const suffix = "-teardown"
	if len(bootstrapName)+len(suffix) > 40 {
		bootstrapName = bootstrapName[:40-len(suffix)]
	}
	return bootstrapName + suffix
}
