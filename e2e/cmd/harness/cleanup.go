package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/tkg-e2e/harness/framework/cleanup"
	"github.com/tkg-e2e/harness/framework/node"
	runstate "github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/suites"
)

// cleanup deletes what a kept (or interrupted) run left, from its state file.
func cleanupCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cleanup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("artifacts", "", "the run folder holding state.json")
	timeout := fs.Duration("timeout", 10*time.Minute, "bound on deleting one cluster")
	interval := fs.Duration("poll", 2*time.Second, "poll period of the delete waits")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *dir == "" {
		fmt.Fprintln(stderr, "harness cleanup: -artifacts <run folder> is required (make clean-run ARTIFACTS=artifacts/<run-id>)")
		return 2
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
	in := suites.Lifecycle.Cleanup(suites.CleanupOptions{State: state, ClusterTimeout: *timeout, KindTimeout: *timeout,
		Interval: *interval, Progress: stdout, Prefix: "[cleanup]"})
	if err := cleanup.All(ctx, in); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}
