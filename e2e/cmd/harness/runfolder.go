package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	runstate "github.com/tkg-e2e/harness/framework/run"
)

// prepareRun picks and checks the run folder before make e2e starts anything
// (and before it tees console.log into it), and prints its absolute path:
//
//   - no -artifacts, no -resume: a new folder <root>/<run-id> (unique: exclusive mkdir);
//   - -artifacts DIR: DIR, which must not be in use nor hold live resources;
//   - -resume: DIR, or the run <root>/latest points at; it must not be in use
//     and must be the caller's own run unless -foreign. It says which run it
//     attaches to.
//
// The suite checks the same again when it opens the run (and holds its lock).
func prepareRun(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("prepare-run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("artifacts", "", "the run folder (make's ARTIFACTS); relative to the current folder")
	root := fs.String("root", "artifacts", "where new run folders go, and where latest is")
	resume := fs.Bool("resume", false, "RESUME=1: re-attach to the kept run in -artifacts (default: <root>/latest)")
	foreign := fs.Bool("foreign", false, "RESUME_FOREIGN=1: resume a run of another OS user")
	dry := fs.Bool("dry-run", false, "check only; create no folder")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	path := expandHome(*dir)
	switch {
	case *resume:
		if path == "" {
			latest := filepath.Join(expandHome(*root), "latest")
			target, err := filepath.EvalSymlinks(latest)
			if err != nil {
				fmt.Fprintf(stderr, "RESUME=1: no run to resume: %s does not point at a run (%v); name one with ARTIFACTS=<run folder>\n", latest, err)
				return 2
			}
			path = target
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		state, err := runstate.Resume(abs, *foreign)
		if err != nil {
			fmt.Fprintf(stderr, "RESUME=1: %v\n", err)
			return 2
		}
		defer state.Close()
		if n := state.LockNote(); n != "" {
			fmt.Fprintln(stderr, "note:", n)
		}
		fmt.Fprintf(stderr, "resuming %s\n", state.Describe())
		fmt.Fprintln(stdout, state.Dir())
		return 0
	case path != "":
		abs, err := filepath.Abs(path)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		if *dry {
			fmt.Fprintln(stdout, abs)
			return 0
		}
		note, err := runstate.CheckFresh(abs)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		if note != "" {
			fmt.Fprintln(stderr, "note:", note)
		}
		fmt.Fprintln(stdout, abs)
		return 0
	default:
		if *dry {
			abs, _ := filepath.Abs(filepath.Join(expandHome(*root), runstate.NewRunID()))
			fmt.Fprintln(stdout, abs)
			return 0
		}
		d, _, err := runstate.CreateRunFolder(expandHome(*root))
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		fmt.Fprintln(stdout, d)
		return 0
	}
}

// expandHome turns a leading ~/ into the home folder (make passes
// ARTIFACTS=~/x through as written when the shell did not expand it).
func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, strings.TrimPrefix(p, "~"))
		}
	}
	return p
}
