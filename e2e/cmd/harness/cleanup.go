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
	"github.com/tkg-e2e/harness/framework/clusters"
	"github.com/tkg-e2e/harness/framework/kind"
	"github.com/tkg-e2e/harness/framework/node"
	runstate "github.com/tkg-e2e/harness/framework/run"
)

// cleanup deletes what a kept (or interrupted) run left, from its state file.
func cleanupCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cleanup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("artifacts", "", "the run folder holding state.json")
	timeout := fs.Duration("timeout", 10*time.Minute, "bound on deleting one cluster")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *dir == "" {
		fmt.Fprintln(stderr, "harness cleanup: -artifacts <run folder> is required (make clean-run ARTIFACTS=artifacts/<run-id>)")
		return 2
	}
	state, err := runstate.Load(*dir)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	live := state.Live()
	fmt.Fprintf(stdout, "run %s: %d resource(s) recorded as not deleted\n", state.RunID, len(live))
	for _, r := range live {
		fmt.Fprintf(stdout, "  %s %s/%s (%s)\n", r.Kind, r.Namespace, r.Name, r.State)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := cleanup.All(ctx, cleanup.Input{State: state, Progress: stdout, Prefix: "[cleanup]",
		Deleters: map[string]cleanup.Deleter{
			kind.ResourceKind:     kind.Deleter(*timeout, stdout, "[cleanup]"),
			clusters.ResourceKind: clusters.Deleter(*timeout, 2*time.Second, stdout, "[cleanup]"),
		},
		LeakChecks: []cleanup.LeakCheck{node.LeakCheck(kind.ResourceKind, clusters.ResourceKind), kind.LeakCheck(kind.ResourceKind, clusters.ResourceKind)},
	}); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}
