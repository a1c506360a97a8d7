package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/tkg-e2e/harness/framework/cleanup"
	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/node"
	runstate "github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/suites"
	"github.com/tkg-e2e/harness/suites/lifecycle"
)

// cleanup deletes what a kept (or interrupted) run left, from its state file.
func cleanupCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cleanup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("artifacts", "", "the run folder holding state.json")
	timeout := fs.Duration("timeout", 10*time.Minute, "bound on deleting one cluster")
	interval := fs.Duration("poll", 2*time.Second, "poll period of the delete waits")
	cfgPath := fs.String("config", "", "the run's profile: with it, cleanup is the suite's own (a self-hosted management "+
		"cluster as its cleanup.selfHosted says, the vCenter leak check, the config's delete intervals)")
	overrides := fs.String("overrides", "", "comma-separated override files of -config")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *dir == "" {
		fmt.Fprintln(stderr, "harness cleanup: -artifacts <run folder> is required (make clean-run ARTIFACTS=artifacts/<run-id>)")
		return 2
	}
	if *cfgPath != "" {
		if code, done := cleanupWithConfig(expandHome(*dir), *cfgPath, *overrides, stdout, stderr); done {
			return code
		}
	}
	state, err := runstate.Load(expandHome(*dir)) // takes the run's lock: a run in use is not cleaned under it
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	defer state.Close()
	if n := state.LockNote(); n != "" {
		fmt.Fprintln(stdout, "note:", n)
	}
	live := state.Live()
	fmt.Fprintf(stdout, "%s: %d resource(s) recorded as not deleted\n", state.Describe(), len(live))
	for _, r := range live {
		fmt.Fprintf(stdout, "  %s %s/%s (%s)\n", r.Kind, r.Namespace, r.Name, r.State)
		if ids := node.Recorded(r); len(ids) > 0 {
			fmt.Fprintf(stdout, "    recorded containers: %s\n", r.Attributes[node.AttrContainers])
		}
	}
	// Only what carries the run's identity is touched: anything else with a
	// run cluster's name or label is reported and left alone.
	fmt.Fprintf(stdout, "acting only on containers recorded by the run, or made by kind/CAPD for its clusters between %s and %s; "+
		"others with the same names are reported and left alone\n",
		state.Started.Format(time.RFC3339), state.Updated.Format(time.RFC3339))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	in := lifecycle.Registry.Cleanup(suites.CleanupOptions{State: state, ClusterTimeout: *timeout, KindTimeout: *timeout,
		Interval: *interval, Progress: stdout, Prefix: "[cleanup]"})
	err = cleanup.All(ctx, in)
	// Without the config there is no vCenter leak check: a leased testbed
	// goes back dirty unless the checks that ran proved it clean.
	suites.ReleaseKeptLease(ctx, state, stdout)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

// cleanupWithConfig runs the suite's own cleanup on a kept run, with the
// Env a resumed suite would build. done is false when the config cannot be
// used (it does not load, or it is another profile's): the caller then
// cleans from the state file alone, and says what that cannot do.
func cleanupWithConfig(dir, cfgPath, overrides string, stdout, stderr io.Writer) (code int, done bool) {
	peek, err := runstate.Peek(dir)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2, true
	}
	var ov []string
	for _, o := range strings.Split(overrides, ",") {
		if o = strings.TrimSpace(o); o != "" {
			ov = append(ov, o)
		}
	}
	if p := config.PeekProfile(cfgPath, ov); p != peek.Profile {
		fmt.Fprintf(stdout, "note: run %s used profile %q and -config %s is %q: cleaning from the state file alone "+
			"(no vCenter leak check; a self-hosted cluster by removing its containers, CAPD only). "+
			"Pass the run's CONFIG and CONFIG_OVERRIDES for the full cleanup.\n", peek.RunID, peek.Profile, cfgPath, p)
		return 0, false
	}
	env, err := suites.NewEnv(suites.EnvOptions{Registry: lifecycle.Registry, ConfigPath: cfgPath, Overrides: ov,
		ArtifactFolder: dir, Resume: true, Out: stdout})
	if err != nil {
		if env != nil && env.State != nil {
			// The run folder was opened (and locked): this is not a config problem.
			fmt.Fprintln(stderr, err)
			return 2, true
		}
		fmt.Fprintf(stdout, "note: the config does not load (%v): cleaning from the state file alone "+
			"(no vCenter leak check; a self-hosted cluster by removing its containers, CAPD only)\n", err)
		return 0, false
	}
	defer env.State.Close()
	fmt.Fprintf(stdout, "%s: cleaning with %s\n", env.State.Describe(), env.Config.Source)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	defer func() { _ = env.Close(context.WithoutCancel(ctx)) }()
	err = cleanup.All(ctx, env.Registry.Cleanup(env.CleanupOptions()))
	env.ReleaseLease(ctx)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1, true
	}
	_ = os.RemoveAll(env.KubeconfigDir)
	return 0, true
}
