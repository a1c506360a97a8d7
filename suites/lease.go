package suites

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tkg-e2e/harness/framework/boskos"
	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/redact"
	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/framework/wait"
)

// User data keys the harness writes on the resource it releases, for the
// janitor or the person who looks at a dirty testbed.
const (
	leaseRunKey    = "tkg-e2e-run"
	leaseReasonKey = "tkg-e2e-dirty-reason"
)

// leaseSecretsFile holds the secret variables a lease supplied, beside the
// kubeconfigs (outside the artifacts, 0600), for RESUME=1 and clean-run:
// Boskos has no call that reads a held resource's user data again.
const leaseSecretsFile = "lease-secrets.json"

// runLease is the Boskos testbed a run holds.
type runLease struct {
	client *boskos.Client
	rec    run.Lease
	stop   func() // the heartbeat

	mu   sync.Mutex
	lost *boskos.LostError
	// lostCtx ends, with the LostError as its cause, when the lease is lost:
	// every stage's context derives from it (stageContext).
	lostCtx context.Context
	lose    context.CancelCauseFunc
	done    bool
}

// takeLease gives the run its testbed: the kept run's lease when resuming
// (checked to be still the run's), else a new one from the pool. It returns
// the variables the testbed's user data supplies, and registers the secret
// ones with the redactor before anything can print them.
func (rc *Run) takeLease(ctx context.Context, l *config.Lease) (map[string]string, error) {
	p := wait.Printer{W: rc.Out, Prefix: "[lease]"}
	if rec := rc.State.LeaseRecord(); rec != nil {
		return rc.reattachLease(ctx, rec, p)
	}
	if rc.Resume {
		return nil, fmt.Errorf("the kept run %s holds no lease, and the profile now has a lease section: "+
			"its testbed cannot be known\nFix: resume with the config the run started with, or start a new run", rc.State.RunID)
	}
	owner := l.Owner
	if owner == "" {
		owner = rc.State.RunID
	}
	c := &boskos.Client{URL: l.URL}
	p.Printf("acquiring a %s from boskos at %s for %s (up to %s)", l.Type, l.URL, owner, l.AcquireTimeout)
	start := time.Now()
	r, err := boskos.AcquireWait(ctx, c, boskos.AcquireOptions{Type: l.Type, Owner: owner,
		Timeout: l.AcquireTimeoutDuration(), Poll: l.AcquirePollDuration(), Progress: rc.Out, Prefix: "[lease]"})
	if err != nil {
		return nil, fmt.Errorf("no testbed leased, nothing was started: %w\nFix: check lease.url (BOSKOS_URL) and lease.type, "+
			"or raise lease.acquireTimeout if the pool is busy", err)
	}
	vars, secretKeys, ignored := l.LeaseValues(r.UserData)
	rec := run.Lease{URL: l.URL, Type: l.Type, Name: r.Name, Owner: owner, Acquired: time.Now().UTC(),
		WaitedSeconds: time.Since(start).Round(time.Millisecond).Seconds(), Values: maps.Clone(vars), SecretKeys: secretKeys}
	for _, k := range secretKeys {
		rc.Redactor.Add(vars[k])
		delete(rec.Values, k)
	}
	if err := rc.State.SetLease(rec); err != nil {
		rc.releaseNow(ctx, c, rec, boskos.Free, "the run could not record its lease")
		return nil, fmt.Errorf("cannot record the lease in the state file: %w", err)
	}
	if err := writeLeaseSecrets(rc.KubeconfigDir, vars, rec.SecretKeys); err != nil {
		rc.releaseNow(ctx, c, rec, boskos.Free, "the run could not keep its secrets")
		_ = rc.State.SetLeaseReleased("free")
		return nil, err
	}
	sets := "nothing"
	if len(vars) > 0 {
		sets = strings.Join(slices.Sorted(maps.Keys(vars)), ", ")
	}
	p.Printf("acquired %s (%s) after %s; its user data sets %s", r.Name, l.Type, time.Since(start).Round(time.Second), sets)
	if len(ignored) > 0 {
		p.Printf("user data keys not used: %s", strings.Join(ignored, "; "))
	}
	rc.startHeartbeat(c, rec, l.HeartbeatDuration())
	return vars, nil
}

// reattachLease takes back the kept run's lease (RESUME=1, clean-run): one
// heartbeat proves it is still the run's.
func (rc *Run) reattachLease(ctx context.Context, rec *run.Lease, p wait.Printer) (map[string]string, error) {
	if !rec.Held() {
		return nil, fmt.Errorf("the kept run's lease on %s ended (%s): its testbed is no longer the run's\nFix: start a new run", rec.Name, rec.Released)
	}
	c := &boskos.Client{URL: rec.URL}
	if err := c.Update(ctx, rec.Name, rec.Owner, boskos.Busy, nil); err != nil {
		if boskos.IsLost(err) {
			_ = rc.State.SetLeaseReleased("lost: " + err.Error())
		}
		return nil, fmt.Errorf("the kept run's testbed %s is not its lease any more: %w\nFix: the testbed may now be another run's; "+
			"start a new run (what the kept run created is listed in %s)", rec.Name, err, rc.State.Path())
	}
	vars := maps.Clone(rec.Values)
	secrets, err := readLeaseSecrets(rc.KubeconfigDir)
	if err != nil && len(rec.SecretKeys) > 0 {
		return nil, fmt.Errorf("the kept run's lease supplied %s, which were kept in %s: %w",
			strings.Join(rec.SecretKeys, ", "), filepath.Join(rc.KubeconfigDir, leaseSecretsFile), err)
	}
	for k, v := range secrets {
		vars[k] = v
		rc.Redactor.Add(v)
	}
	if rec.Released == run.LeaseKept {
		_ = rc.State.SetLeaseReleased("")
	}
	p.Printf("re-attached to %s (%s), leased by %s", rec.Name, rec.Type, rec.Owner)
	rc.startHeartbeat(c, *rec, rc.Config.Lease.HeartbeatDuration())
	return vars, nil
}

func (rc *Run) startHeartbeat(c *boskos.Client, rec run.Lease, period time.Duration) {
	lostCtx, lose := context.WithCancelCause(context.Background())
	rl := &runLease{client: c, rec: rec, lostCtx: lostCtx, lose: lose}
	rl.stop = boskos.Heartbeat(context.Background(), c, boskos.HeartbeatOptions{
		Name: rec.Name, Owner: rec.Owner, Period: period,
		OnLost: func(err *boskos.LostError) {
			rl.mu.Lock()
			rl.lost = err
			rl.mu.Unlock()
			_ = rc.State.SetLeaseReleased("lost: " + err.Error())
			rc.Printf("[lease] LEASE LOST: %v; the run stops", err)
			lose(err)
		},
		OnError: func(err error) {
			rc.Printf("[lease] heartbeat of %s failed (retrying every %s): %v", rec.Name, period, err)
		},
	})
	rc.mu.Lock()
	rc.lease = rl
	rc.mu.Unlock()
	rc.AddCloser("lease heartbeat", func(context.Context) error { rl.stop(); return nil })
}

// LeaseLost is the lost lease's error, nil while the run holds its lease
// (or has none).
func (rc *Run) LeaseLost() error {
	rl := rc.runLease()
	if rl == nil {
		return nil
	}
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if rl.lost == nil {
		return nil
	}
	return rl.lost
}

// stageContext ends when ctx does or when the lease is lost, so a stage
// stops instead of working on a testbed that may now be another run's.
func (rc *Run) stageContext(ctx context.Context) (context.Context, context.CancelFunc) {
	rl := rc.runLease()
	if rl == nil {
		return context.WithCancel(ctx)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(rl.lostCtx, func() { cancel(context.Cause(rl.lostCtx)) })
	return ctx, func() { stop(); cancel(context.Canceled) }
}

// end stops the heartbeat once; first is false when the lease was already
// ended (released, kept, or given up), lost says whether Boskos took it.
func (rl *runLease) end() (lost *boskos.LostError, first bool) {
	rl.mu.Lock()
	first, lost = !rl.done, rl.lost
	rl.done = true
	rl.mu.Unlock()
	rl.stop()
	return lost, first
}

func (rc *Run) runLease() *runLease {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.lease
}

// ReleaseLease ends the run's lease once cleanup has run: free when the
// cleanup and its leak checks proved nothing of the run is left, dirty with
// the reason in the resource's user data otherwise; kept (busy, no more
// heartbeats) with SKIP_CLEANUP=1; untouched when it was lost.
func (rc *Run) ReleaseLease(ctx context.Context) {
	rl := rc.runLease()
	if rl == nil {
		return
	}
	lost, first := rl.end()
	if !first {
		return
	}
	p := wait.Printer{W: rc.Out, Prefix: "[lease]"}
	if lost != nil {
		p.Printf("not releasing %s: %v", rl.rec.Name, lost)
		return
	}
	if rc.SkipCleanup {
		_ = rc.State.SetLeaseReleased(run.LeaseKept)
		p.Printf("kept %s busy for the kept run (no more heartbeats: Boskos's reaper takes it back after its expiry); "+
			"make clean-run ARTIFACTS=%s cleans up and releases it", rl.rec.Name, rc.ArtifactFolder)
		return
	}
	dest, reason := boskos.Free, ""
	if outcome := rc.State.CleanupOutcome(); outcome != "done: nothing left" {
		dest, reason = boskos.Dirty, leaseDirtyReason(outcome)
	}
	rc.releaseNow(ctx, rl.client, rl.rec, dest, reason)
}

// stopHeartbeat ends the heartbeat and leaves the lease as the state
// records it (a kept run that could not be resumed keeps its testbed).
func (rc *Run) stopHeartbeat() {
	if rl := rc.runLease(); rl != nil {
		rl.end()
	}
}

// releaseUnused gives back a lease the run could not use (its user data
// did not complete the config): nothing was created, so it goes back free.
func (rc *Run) releaseUnused(ctx context.Context) {
	rl := rc.runLease()
	if rl == nil {
		return
	}
	rl.end()
	rc.releaseNow(ctx, rl.client, rl.rec, boskos.Free, "")
}

// releaseNow writes the run and the reason into the resource's user data
// (an empty reason clears an earlier one), releases it to dest, and removes
// the secrets kept for a resume: whatever Boskos answers, the lease is over.
func (rc *Run) releaseNow(ctx context.Context, c *boskos.Client, rec run.Lease, dest, reason string) {
	defer os.Remove(filepath.Join(rc.KubeconfigDir, leaseSecretsFile))
	p := wait.Printer{W: rc.Out, Prefix: "[lease]"}
	ctx = context.WithoutCancel(ctx) // Ctrl-C is why many runs release: do it anyway
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	note := map[string]string{leaseRunKey: rc.State.RunID, leaseReasonKey: rc.Redactor.String(reason)}
	if err := c.Update(ctx, rec.Name, rec.Owner, boskos.Busy, note); err != nil {
		p.Printf("cannot write the release note on %s: %v", rec.Name, err)
	}
	if err := c.Release(ctx, rec.Name, rec.Owner, dest); err != nil {
		if boskos.IsLost(err) {
			// Taken back between the last heartbeat and now: not ours to release.
			_ = rc.State.SetLeaseReleased("lost: " + err.Error())
			p.Printf("%s was no longer the run's at release: %v", rec.Name, err)
			return
		}
		_ = rc.State.SetLeaseReleased(fmt.Sprintf("release to %s failed: %v", dest, err))
		p.Printf("cannot release %s to %s: %v (Boskos's reaper takes it back after its expiry)", rec.Name, dest, err)
		return
	}
	msg := dest
	if reason != "" {
		msg += ": " + rc.Redactor.String(reason)
	}
	_ = rc.State.SetLeaseReleased(msg)
	p.Printf("released %s %s", rec.Name, msg)
}

// leaseDirtyReason turns the cleanup outcome into the reason a janitor reads.
func leaseDirtyReason(outcome string) string {
	switch {
	case outcome == "":
		return "cleanup did not run to the end"
	case outcome == "done: no leak check configured":
		return "no leak check could prove the testbed clean"
	}
	if len(outcome) > 500 {
		outcome = outcome[:500] + "…"
	}
	return "cleanup " + outcome
}

func writeLeaseSecrets(dir string, vars map[string]string, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, k := range keys {
		out[k] = vars[k]
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, leaseSecretsFile), b, 0o600); err != nil {
		return fmt.Errorf("cannot keep the lease's secrets for RESUME=1: %w", err)
	}
	return nil
}

func readLeaseSecrets(dir string) (map[string]string, error) {
	b, err := os.ReadFile(filepath.Join(dir, leaseSecretsFile))
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, errors.New("the file is not JSON")
	}
	return out, nil
}

// ReleaseKeptLease releases the lease a kept run's state records, for
// `make clean-run` without the run's config: free only when the cleanup
// that ran recorded "done: nothing left".
func ReleaseKeptLease(ctx context.Context, st *run.State, out io.Writer) {
	rec := st.LeaseRecord()
	if !rec.Held() {
		return
	}
	rc := &Run{State: st, Redactor: redact.New(), Out: out, KubeconfigDir: kubeconfigDir(st, true)}
	dest, reason := boskos.Free, ""
	if outcome := st.CleanupOutcome(); outcome != "done: nothing left" {
		dest, reason = boskos.Dirty, leaseDirtyReason(outcome)
	}
	rc.releaseNow(ctx, &boskos.Client{URL: rec.URL}, *rec, dest, reason)
}
