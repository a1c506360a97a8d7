// Command harness is the small CLI around the suite: it validates a profile
// before any long work, prints values the Makefile needs, shows the stage plan
// of a FOCUS, and deletes what a kept run left behind.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/conformance"
	"github.com/tkg-e2e/harness/framework/packages"
	"github.com/tkg-e2e/harness/framework/placement"
	"github.com/tkg-e2e/harness/framework/stages"
	"github.com/tkg-e2e/harness/suites"
	"github.com/tkg-e2e/harness/suites/lifecycle"
)

const usage = `usage: harness <command> [flags]

commands:
  validate -config FILE [-overrides A,B]   check a profile; every problem at once, exit 2 if any
  get timeout -config FILE                 print the suite timeout
  plan [-stages "move"] [-v]               print the stages a FOCUS runs, in order (-v: with needs, intervals, docs)
  select -focus F [-labels L]              print the ginkgo selection flags for make e2e's FOCUS and LABELS
  cleanup -artifacts DIR                   delete what the kept run in DIR left behind
  prepare-run [-artifacts DIR] [-resume [-foreign]] [-root artifacts]
                                           pick and check the run folder for make e2e; print its path

Stages, their order and needs come from the stage registry (suites/registry.go).
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "validate":
		return validate(args[1:], stdout, stderr)
	case "get":
		return get(args[1:], stdout, stderr)
	case "plan":
		return plan(args[1:], stdout, stderr)
	case "select":
		return selectCmd(args[1:], stdout, stderr)
	case "cleanup":
		return cleanupCmd(args[1:], stdout, stderr)
	case "prepare-run":
		return prepareRun(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "harness: unknown command %q\n%s", args[0], usage)
		return 2
	}
}

func loadFlags(name string, args []string, stderr io.Writer) (*config.Config, []string, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "config/local.yaml", "harness profile")
	overrides := fs.String("overrides", "", "comma-separated override files")
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	var ov []string
	for _, o := range strings.Split(*overrides, ",") {
		if o = strings.TrimSpace(o); o != "" {
			ov = append(ov, o)
		}
	}
	cfg, err := config.Load(config.LoadOptions{Path: *path, Overrides: ov, Intervals: lifecycle.Registry.IntervalKeys(),
		DriverIntervals: lifecycle.Registry.DriverIntervalKeys()})
	return cfg, fs.Args(), err
}

func validate(args []string, stdout, stderr io.Writer) int {
	start := time.Now()
	cfg, _, err := loadFlags("validate", args, stderr)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	// The placement matrix, the package list and the kubetest config are read by stages that run
	// an hour into a vSphere run: a mistake in them is found now.
	var bad []string
	if _, err := placement.Load(cfg.Placement.Matrix); err != nil {
		bad = append(bad, fmt.Sprintf("placement.matrix %s: %v", cfg.Placement.Matrix, err))
	}
	if _, err := packages.Load(cfg.Packages.Expected); err != nil {
		bad = append(bad, fmt.Sprintf("packages.expected %s: %v", cfg.Packages.Expected, err))
	}
	if f := cfg.Conformance.KubetestConfig; f != "" {
		if _, err := conformance.ReadSelection(f); err != nil {
			bad = append(bad, fmt.Sprintf("conformance.kubetestConfig %s: %v", f, err))
		}
	}
	if len(bad) > 0 {
		fmt.Fprintf(stderr, "invalid harness config: %d problem(s) in the files it names (nothing was started)\n  %s\n", len(bad), strings.Join(bad, "\n  "))
		return 2
	}
	names := []string{cfg.Clusters.Bootstrap.Name}
	for _, id := range cfg.ClusterIDs() {
		c, _ := cfg.ClusterOf(id)
		names = append(names, c.Name)
	}
	fmt.Fprintf(stdout, "config OK: %s (profile %s, %d OVA(s), clusters %s) in %s\n", cfg.Source, cfg.Profile,
		len(cfg.OVA.Images), strings.Join(names, "/"), time.Since(start).Round(time.Millisecond))
	if l := cfg.Lease; l != nil {
		fmt.Fprintf(stdout, "lease: a %s from boskos at %s (up to %s); ", l.Type, l.URL, l.AcquireTimeout)
		if len(cfg.DeferredVariables) > 0 {
			fmt.Fprintf(stdout, "expected from its user data: %s (checked again once it is leased)\n", strings.Join(cfg.DeferredVariables, ", "))
		} else {
			fmt.Fprintln(stdout, "every variable is already set")
		}
	}
	return 0
}

func get(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "timeout" {
		fmt.Fprintf(stderr, "harness get: want `get timeout -config FILE`\n")
		return 2
	}
	cfg, _, err := loadFlags("get", args[1:], stderr)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	fmt.Fprintln(stdout, cfg.SuiteTimeout())
	return 0
}

func plan(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sel := fs.String("stages", "", "space-separated stage names (empty: all)")
	focus := fs.String("focus", "", "make e2e's FOCUS: stage names plan their closure, a regex plans every stage")
	verbose := fs.Bool("v", false, "one line per stage with its needs, interval keys and what it does")
	cfgPath := fs.String("config", "", "profile whose extra needs apply (e.g. CAPV clusters need ova); empty: none")
	overrides := fs.String("overrides", "", "comma-separated override files of -config")
	qualify := fs.Bool("qualify", false, "QUALIFY=1: the day-two stages too when no stage is named")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	reg := lifecycle.Registry
	if *cfgPath != "" {
		var ov []string
		if *overrides != "" {
			ov = strings.Split(*overrides, ",")
		}
		peek := config.Peek(*cfgPath, ov)
		reg = reg.ForProfile(peek.Profile).ForDriver(peek.Driver)
	}
	names := strings.Fields(*sel)
	if words := focusStages(*focus); len(words) > 0 {
		names = words
	} else if strings.TrimSpace(*focus) != "" {
		fmt.Fprintf(stdout, "FOCUS %q is not stage names: it selects specs by name among all stages\n", *focus)
	}
	if len(names) == 0 {
		for _, n := range reg.Names() {
			if d, _ := reg.Get(n); *qualify || !d.DayTwo {
				names = append(names, n)
			}
		}
	}
	closure, err := reg.Closure(names...)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	fmt.Fprintf(stdout, "stages: %s\n", strings.Join(closure, " -> "))
	for _, name := range closure {
		if s, _ := reg.Stage(name); s.JoinAfter != "" {
			where := "joined right after it: no stage runs beside it in this selection"
			if beside := besideTail(reg, closure, s); len(beside) > 0 {
				last := beside[len(beside)-1]
				if len(beside) == 1 {
					last = "it"
				}
				where = "runs beside " + strings.Join(beside, ", ") + " and is joined after " + last + ", as " + name + "'s own spec"
			}
			fmt.Fprintf(stdout, "overlap: %s leaves its last checks running; %s\n", name, where)
		}
	}
	selected, err := reg.StagesNamed(closure...)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if suites.NothingMadeAfterMove(selected) {
		fmt.Fprintln(stdout, "overlap: under cleanup.selfHosted moveBack, cleanup's throw-away kind cluster is made beside the move "+
			"(nothing after it makes anything, so the move-back is cleanup's first deletion); none with SKIP_CLEANUP=1")
	}
	if *verbose {
		for _, name := range closure {
			d, _ := reg.Get(name)
			fmt.Fprintf(stdout, "  %-11s needs [%s] category %s; intervals %s\n      %s\n", d.Name, strings.Join(d.Needs, " "),
				d.Category, strings.Join(d.Intervals, ", "), d.Doc)
		}
	}
	return 0
}

// besideTail is the selected stages that run while s's tail does: those
// registered after s up to the stage its join is declared after, which
// need not be selected itself (the join is declared there all the same).
func besideTail(reg *suites.Registry, selected []string, s suites.Stage) []string {
	var out []string
	names := reg.Names()
	for _, n := range names[slices.Index(names, s.Name)+1:] {
		if slices.Contains(selected, n) {
			out = append(out, n)
		}
		if n == s.JoinAfter {
			break
		}
	}
	return out
}

// selectCmd turns make e2e's FOCUS and LABELS into ginkgo flags, one per
// line: FOCUS made only of stage names becomes a label filter (every stage
// carries the labels of the stages that need it, so the filter selects
// exactly the stages and their prerequisites); anything else is a --focus
// regex.
func selectCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("select", flag.ContinueOnError)
	fs.SetOutput(stderr)
	focus := fs.String("focus", "", "stage names (space, comma or | separated) or a regex on spec names")
	labels := fs.String("labels", "", "an extra ginkgo label filter")
	qualify := fs.Bool("qualify", false, "the release-qualification run: the day-two stages (upgrade, scale, remediate) too")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	words := focusStages(*focus)
	var filters []string
	if len(words) > 0 {
		filters = append(filters, "("+strings.Join(words, " || ")+")")
	} else if strings.TrimSpace(*focus) != "" {
		fmt.Fprintf(stdout, "--focus=%s\n", *focus)
	}
	// Day two runs when asked for: by name in FOCUS, or QUALIFY=1.
	if len(words) == 0 && !*qualify {
		filters = append(filters, "!"+stages.DayTwoLabel)
	}
	if strings.TrimSpace(*labels) != "" {
		filters = append(filters, "("+*labels+")")
	}
	if len(filters) > 0 {
		fmt.Fprintf(stdout, "--label-filter=%s\n", strings.Join(filters, " && "))
	}
	return 0
}

// focusStages returns FOCUS's words when every one is a stage name, else nil.
func focusStages(focus string) []string {
	words := strings.FieldsFunc(focus, func(r rune) bool { return r == ' ' || r == ',' || r == '|' })
	for _, w := range words {
		if _, ok := lifecycle.Registry.Get(w); !ok {
			return nil
		}
	}
	return words
}
