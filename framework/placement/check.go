package placement

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/assert"
	"github.com/tkg-e2e/harness/framework/wait"
)

// Check is the placement matrix as an assert.Check: every target whose role
// the matrix has a column for is evaluated against that column until it
// matches or the timeout passes. The failure message of a cluster carries
// the whole rendered matrix and every deviation, with the last log lines of
// the failing pods.
type Check struct {
	Matrix *Matrix
	// LogLines is how many log lines to keep per failing container (default 20).
	LogLines int64
	// MaxLogPods bounds how many failing pods of one row get their logs fetched (default 3).
	MaxLogPods int
}

// NewCheck returns the check of a loaded matrix with the default log limits.
func NewCheck(m *Matrix) *Check { return &Check{Matrix: m} }

// Name is "placement": the files are placement.md and placement.html.
func (c *Check) Name() string { return "placement" }

// Plan covers the targets whose role the matrix has a column for.
func (c *Check) Plan(t assert.Target, opts assert.Options) (assert.Probe, error) {
	if c.Matrix == nil {
		return nil, errors.New("no matrix (placement.Load a config/placement/*.yaml file)")
	}
	if !c.Matrix.HasRole(t.Role) {
		return nil, nil
	}
	return &probe{check: c, target: t, opts: opts}, nil
}

// Render is the matrix with a column per checked cluster, in Markdown and as
// a self-contained HTML page.
func (c *Check) Render(reports []assert.Report) (string, string, error) {
	var reps []*Report
	for _, r := range reports {
		rep, ok := r.(*Report)
		if !ok {
			return "", "", fmt.Errorf("placement: cannot render a %T", r)
		}
		reps = append(reps, rep)
	}
	html, err := HTML(c.Matrix, reps...)
	return Markdown(c.Matrix, reps...), html, err
}

type probe struct {
	check  *Check
	target assert.Target
	opts   assert.Options
}

func (p *probe) What() string {
	return fmt.Sprintf("pods of the %s cluster %s to match placement matrix %s", p.target.Role, p.target.Name, p.check.Matrix.Name)
}

func (p *probe) Observe(ctx context.Context) (assert.Report, error) {
	snap, err := Snap(ctx, p.target.Cluster.Client)
	if err != nil {
		return nil, err
	}
	r, err := Evaluate(p.check.Matrix, p.target.Role, p.target.Name, snap)
	if err != nil {
		return nil, wait.Permanent(err)
	}
	return r, nil
}

// Finish fetches logs once, for a final report that fails only: fetching
// them on every poll would cost API calls for pods that recover a moment
// later. The context may be what ended the wait; the report still deserves
// its logs.
func (p *probe) Finish(ctx context.Context, last assert.Report, settled bool) error {
	if !settled {
		addLogs(context.WithoutCancel(ctx), p, last.(*Report))
	}
	return nil
}

// Snap lists every pod and node of a cluster.
func Snap(ctx context.Context, c client.Client) (Snapshot, error) {
	var pods corev1.PodList
	if err := c.List(ctx, &pods); err != nil {
		return Snapshot{}, fmt.Errorf("listing pods: %w", err)
	}
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes); err != nil {
		return Snapshot{}, fmt.Errorf("listing nodes: %w", err)
	}
	return Snapshot{Pods: pods.Items, Nodes: nodes.Items}, nil
}
