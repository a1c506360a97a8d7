package health

import (
	"context"
	"errors"
	"fmt"

	"github.com/tkg-e2e/harness/framework/assert"
)

// Expectation is what one cluster must look like. It comes from the run's
// config, not from the cluster, so a cluster that lost a node fails instead
// of being judged against itself.
type Expectation struct {
	ControlPlaneNodes, WorkerNodes int
	// KubernetesVersion is the configured version ("v1.33.1"); kubelets
	// reporting it with build metadata ("v1.33.1+vmware.1") match. Empty
	// leaves the version unchecked.
	KubernetesVersion string
}

func (e Expectation) validate() error {
	switch {
	case e.ControlPlaneNodes < 1:
		return fmt.Errorf("expectation has ControlPlaneNodes %d: a cluster has at least one control plane node (take the count from the cluster's config)", e.ControlPlaneNodes)
	case e.WorkerNodes < 0:
		return fmt.Errorf("expectation has WorkerNodes %d: it must be 0 or more (take the count from the cluster's config)", e.WorkerNodes)
	}
	return nil
}

// Check is cluster health as an assert.Check.
type Check struct {
	// Expect gives a target's expectation; false means the target is not
	// this check's concern.
	Expect func(t assert.Target) (Expectation, bool)
	// ReadOnly forbids the one write the check may make: a scratch
	// namespace (labelled AdmissionProbeLabel, deleted by Finish) for
	// probing an admission webhook whose namespaceSelector no existing
	// namespace matches. Such a webhook is then reported as not probed.
	// The probes themselves are dry-run requests, which persist nothing.
	ReadOnly bool
}

// NewCheck returns the check; expect says what each target must look like,
// or false for a target the check must leave alone.
func NewCheck(expect func(t assert.Target) (Expectation, bool)) *Check {
	return &Check{Expect: expect}
}

// Name is "health": the files are health.md and health.html.
func (c *Check) Name() string { return "health" }

// Plan covers the targets Expect gives an expectation for.
func (c *Check) Plan(t assert.Target, opts assert.Options) (assert.Probe, error) {
	if c.Expect == nil {
		return nil, errors.New("no expectation (build the check with health.NewCheck(func(assert.Target) (health.Expectation, bool)))")
	}
	e, ok := c.Expect(t)
	if !ok {
		return nil, nil
	}
	if err := e.validate(); err != nil {
		return nil, err
	}
	if t.Cluster == nil || t.Cluster.Client == nil {
		return nil, errors.New("no client (build the target with kube.Connect)")
	}
	a, err := newAdmission(t.Cluster, c.ReadOnly)
	if err != nil {
		return nil, err
	}
	return &probe{target: t, expect: e, opts: opts, admission: a}, nil
}

// Render joins the per-cluster reports; the HTML page is the engine's rows page.
func (c *Check) Render(reports []assert.Report) (string, string, error) {
	return assert.JoinMarkdown("health", reports)
}

type probe struct {
	target assert.Target
	expect Expectation
	opts   assert.Options
	// admission probes the webhooks; it keeps the scratch namespace
	// across polls.
	admission *admission
}

func (p *probe) What() string {
	return fmt.Sprintf("nodes, APIServices and admission webhooks of the %s to be healthy", p.target.Title())
}

// Observe reads everything every time: a cluster is healthy only when all
// of it is healthy at once, and the reads are a handful of list calls.
func (p *probe) Observe(ctx context.Context) (assert.Report, error) {
	c := p.target.Cluster.Client
	r := &Report{Role: p.target.Role, Cluster: p.target.Name, Expect: p.expect}
	for _, section := range []func(context.Context) ([]assert.Row, error){
		func(ctx context.Context) ([]assert.Row, error) { return nodeRows(ctx, c, p.expect, r) },
		func(ctx context.Context) ([]assert.Row, error) { return apiServiceRows(ctx, c, r) },
		func(ctx context.Context) ([]assert.Row, error) { return webhookRows(ctx, c, r, p.admission) },
	} {
		rows, err := section(ctx)
		if err != nil {
			return nil, err
		}
		r.rows = append(r.rows, rows...)
	}
	// Condition messages and webhook URLs are quoted from the cluster.
	for i := range r.rows {
		r.rows[i].Detail = p.opts.Redactor.String(r.rows[i].Detail)
		r.rows[i].Stuck = p.opts.Redactor.String(r.rows[i].Stuck)
	}
	return r, nil
}

// Finish deletes the scratch namespace of the webhook probes, if one was
// made; every row already quotes its cause.
func (p *probe) Finish(ctx context.Context, _ assert.Report, _ bool) error {
	return p.Close(ctx)
}

// Close deletes the scratch namespace when the wait was interrupted
// (assert.Closer).
func (p *probe) Close(ctx context.Context) error {
	return p.admission.finish(ctx, p.target.Cluster.Client)
}
