// Command harness is the small CLI around the suite: it validates a profile
// before any long work, prints values the Makefile needs, shows the stage plan
// of a FOCUS, and deletes what a kept run left behind.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/stages"
)

const usage = `usage: harness <command> [flags]

commands:
  validate -config FILE [-overrides A,B]   check a profile; every problem at once, exit 2 if any
  get timeout -config FILE                 print the suite timeout
  plan [-stages "move"]                    print the stages a FOCUS runs, in order
  cleanup -artifacts DIR                   delete what the kept run in DIR left behind
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
	case "cleanup":
		return cleanupCmd(args[1:], stdout, stderr)
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
	cfg, err := config.Load(config.LoadOptions{Path: *path, Overrides: ov})
	return cfg, fs.Args(), err
}

func validate(args []string, stdout, stderr io.Writer) int {
	start := time.Now()
	cfg, _, err := loadFlags("validate", args, stderr)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	fmt.Fprintf(stdout, "config OK: %s (profile %s, %d OVA(s), clusters %s/%s/%s) in %s\n", cfg.Source, cfg.Profile,
		len(cfg.OVA.Images), cfg.Clusters.Bootstrap.Name, cfg.Clusters.Management.Name, cfg.Clusters.Workload.Name,
		time.Since(start).Round(time.Millisecond))
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
	if err := fs.Parse(args); err != nil {
		return 2
	}
	names := strings.Fields(*sel)
	if len(names) == 0 {
		names = stages.All
	}
	closure, err := stages.Closure(names...)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	fmt.Fprintf(stdout, "stages: %s\n", strings.Join(closure, " -> "))
	return 0
}
