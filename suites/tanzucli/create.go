package tanzucli

import (
	"context"
	"time"

	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/framework/tanzu"
	"github.com/tkg-e2e/harness/suites"
)

// createCommand is one of the CLI's create commands (`tanzu
// management-cluster create`, `tanzu cluster create`), as runCreate runs it.
type createCommand struct {
	Env *suites.Env
	CLI *CLI
	// Resource is the cluster's record, written before the command starts;
	// the command's hooks may change it (the kubeconfig), so it is shared.
	Resource *run.Resource
	// Values are the cluster configuration file's variables.
	Values map[string]string
	// Stage prefixes the progress lines; Name names the transcript.
	Stage, Name string
	// Args are the CLI's arguments, given the configuration file's path.
	Args    func(configFile string) []string
	Timeout time.Duration
	Hooks   tanzu.Hooks
	// Wait, when set, waits for what the hooks started, before the result
	// is judged.
	Wait func()
	// Passed, when set, checks a command that exited 0 (what the CLI should
	// have said on the way).
	Passed func(res *tanzu.Result) error
}

// runCreate records the cluster, writes its configuration file (0600,
// removed when the command ends), runs the command, keeps its result for
// later stages, and marks the record ready, or gone when the CLI failed
// before it made anything. The Result is returned whenever the command ran.
func runCreate(ctx context.Context, c createCommand) (*tanzu.Result, error) {
	env, prefix := c.Env, "["+c.Stage+"]"
	if err := env.State.PutResource(*c.Resource); err != nil {
		return nil, err
	}
	cf, removeConfig, err := c.CLI.configFile(c.Values, prefix)
	if err != nil {
		return nil, err
	}
	defer removeConfig()
	res, err := c.CLI.Run(ctx, c.Name, c.Args(cf.Path), c.Timeout, c.Hooks, prefix)
	if c.Wait != nil {
		c.Wait()
	}
	setTanzuResult(env, c.Resource.Role, res)
	markNeverCreated(env.Run, prefix, *c.Resource, res, err)
	if err == nil && res != nil && c.Passed != nil {
		err = c.Passed(res)
	}
	if err == nil && res != nil {
		c.Resource.State = "ready"
		err = env.State.PutResource(*c.Resource)
	}
	return res, err
}
