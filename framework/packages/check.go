package packages

import (
	"context"
	"errors"
	"fmt"

	pkgv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/assert"
)

// Check is the package list as an assert.Check: on every target whose role
// has entries, each expected PackageInstall must reach ReconcileSucceeded
// (with the expected package and version) before the timeout.
// ReconcileFailed is polled through, because kapp-controller retries it and
// it often succeeds seconds later. On a workload cluster of a run with a
// management cluster, the ClusterBootstrap mirror is checked next (skipped,
// with the reason, where its CRD does not exist).
type Check struct {
	List *List
}

// NewCheck returns the check of a loaded package list.
func NewCheck(l *List) *Check { return &Check{List: l} }

// Name is "packages": the files are packages.md and packages.html.
func (c *Check) Name() string { return "packages" }

// Plan expands the role's entries for the target (${CLUSTER_NAME},
// ${CLUSTER_NAMESPACE}). A role the list has no entries for is an error (a
// cluster the run made but nobody said what it must run); an empty list of
// entries means nothing to check.
func (c *Check) Plan(t assert.Target, opts assert.Options) (assert.Probe, error) {
	if c.List == nil {
		return nil, errors.New("no package list (packages.Load a config/packages/*.yaml file)")
	}
	expected, err := c.List.For(t.Role, map[string]string{"CLUSTER_NAME": t.Name, "CLUSTER_NAMESPACE": t.Namespace})
	if err != nil || len(expected) == 0 {
		return nil, err
	}
	p := &probe{target: t, expected: expected, opts: opts, client: t.Cluster.Client}
	if m := opts.Target(assert.Management); m != nil {
		p.mgmt = m.Cluster.Client
	}
	for _, c := range []client.Client{p.client, p.mgmt} {
		if c != nil {
			if err := requireTypes(c); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

// Render joins the per-cluster reports; the HTML page is the engine's rows page.
func (c *Check) Render(reports []assert.Report) (string, string, error) {
	return assert.JoinMarkdown("packages", reports)
}

type probe struct {
	target   assert.Target
	expected []Expected
	opts     assert.Options
	// mgmt reaches the management cluster, for entries with location:
	// management and the ClusterBootstrap; nil skips them (reported as
	// skipped, not passed).
	client, mgmt client.Client
}

func (p *probe) What() string {
	return fmt.Sprintf("%d PackageInstalls on the %s cluster %s to reach ReconcileSucceeded", len(p.expected), p.target.Role, p.target.Name)
}

func (p *probe) Observe(ctx context.Context) (assert.Report, error) {
	r := &Report{Cluster: p.target.Name, Role: p.target.Role}
	for _, e := range p.expected {
		r.Results = append(r.Results, p.observe(ctx, e))
	}
	return r, nil
}

func (p *probe) observe(ctx context.Context, e Expected) Result {
	c := p.client
	if e.location() == OnManagement {
		if p.mgmt == nil {
			return Result{Expected: e, Verdict: assert.SkippedVerdict,
				Problem: "lives on the management cluster and no ManagementClient was given"}
		}
		c = p.mgmt
	}
	pi := &pkgv1alpha1.PackageInstall{}
	err := c.Get(ctx, client.ObjectKey{Namespace: e.Namespace, Name: e.Name}, pi)
	res := judge(e, pi, err)
	red := p.opts.Redactor
	res.Problem = red.String(res.Problem)
	res.State.Message = red.String(res.State.Message)
	res.State.UsefulErrorMessage = red.String(res.State.UsefulErrorMessage)
	for i := range res.State.Conditions {
		res.State.Conditions[i].Message = red.String(res.State.Conditions[i].Message)
	}
	return res
}

// Finish checks the ClusterBootstrap mirror of a workload cluster, whether
// its PackageInstalls passed or not: the mirror of a failed one is what TKG
// users look at.
func (p *probe) Finish(ctx context.Context, last assert.Report, _ bool) error {
	if p.mgmt == nil || p.target.Role == assert.Management {
		return nil
	}
	bs, err := CheckClusterBootstrap(ctx, BootstrapInput{ManagementClient: p.mgmt, ClusterName: p.target.Name,
		ClusterNamespace: p.target.Namespace, Packages: last.(*Report), Timeout: p.opts.Timeout, Interval: p.opts.Interval,
		Progress: p.opts.Progress, Prefix: p.opts.Prefix})
	if err != nil {
		return fmt.Errorf("ClusterBootstrap: %w", err)
	}
	if bs.Skipped && p.opts.Progress != nil {
		fmt.Fprintf(p.opts.Progress, "%s ClusterBootstrap check of %s skipped: %s\n", p.opts.Prefix, p.target.Name, bs.SkipReason)
	}
	return nil
}
