package node

import (
	"context"
	"io"

	"sigs.k8s.io/cluster-api/test/infrastructure/container"
	kindexec "sigs.k8s.io/kind/pkg/exec"
)

// kindNode is a kind nodes.Node whose commands go through the Runtime, so
// kind's nodeutils (image ID in the node, `ctr import` with the node's
// snapshotter) serve kind and CAPD nodes without the docker CLI. kind's
// helpers take no context: the node carries the caller's.
type kindNode struct {
	ctx  context.Context
	name string
}

func (n kindNode) String() string { return n.name }

// Role is not needed by the nodeutils helpers used here.
func (n kindNode) Role() (string, error) { return "", nil }

func (n kindNode) IP() (string, string, error) {
	rt, err := runtime(n.ctx)
	if err != nil {
		return "", "", err
	}
	return rt.GetContainerIPs(n.ctx, n.name)
}

func (n kindNode) SerialLogs(w io.Writer) error { return DebugInfo(n.ctx, n.name, w) }

func (n kindNode) Command(cmd string, args ...string) kindexec.Cmd {
	return n.CommandContext(n.ctx, cmd, args...)
}

func (n kindNode) CommandContext(ctx context.Context, cmd string, args ...string) kindexec.Cmd {
	return &nodeCmd{ctx: ctx, node: n.name, argv: append([]string{cmd}, args...)}
}

type nodeCmd struct {
	ctx  context.Context
	node string
	argv []string
	in   container.ExecContainerInput
}

// Run execs through the Runtime. Its ExecContainer stops waiting for a
// command that outlives its input by five minutes (it polls 600 times, every
// half second): ample for one image's `ctr import`, which is why images are
// imported one archive at a time.
func (c *nodeCmd) Run() error {
	in := c.in
	return execIn(c.ctx, c.node, &in, c.argv...)
}

func (c *nodeCmd) SetEnv(env ...string) kindexec.Cmd {
	c.in.EnvironmentVars = env
	return c
}

func (c *nodeCmd) SetStdin(r io.Reader) kindexec.Cmd {
	c.in.InputBuffer = r
	return c
}

func (c *nodeCmd) SetStdout(w io.Writer) kindexec.Cmd {
	c.in.OutputBuffer = w
	return c
}

func (c *nodeCmd) SetStderr(w io.Writer) kindexec.Cmd {
	c.in.ErrorBuffer = w
	return c
}
