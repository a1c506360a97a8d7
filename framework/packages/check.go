package packages

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	pkgv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/redact"
	"github.com/tkg-e2e/harness/framework/wait"
)

// CheckInput describes one package reconcile check.
type CheckInput struct {
	// Client reaches the cluster under test. Required.
	Client client.Client
	// ManagementClient reaches the management cluster, for entries with
	// on: management. Nil skips those entries (reported as skipped, not passed).
	ManagementClient client.Client
	// Expected are the PackageInstalls to wait for (List.For).
	Expected []Expected
	// Cluster and Role name the cluster in the report.
	Cluster, Role string
	// Timeout is how long every PackageInstall has to reach ReconcileSucceeded,
	// from the config intervals. Failed reconciles are retried until then.
	Timeout  time.Duration
	Interval time.Duration
	Progress io.Writer
	Prefix   string
	// Redactor masks secrets in kapp-controller's messages (they can quote
	// values). Nil still masks secret shapes.
	Redactor *redact.Redactor
}

// FailedError is returned when some PackageInstall did not reconcile in
// time. Its message is the whole report in Markdown.
type FailedError struct {
	Report *Report
	Waited time.Duration
}

func (e *FailedError) Error() string {
	return fmt.Sprintf("packages on the %s cluster %s did not reconcile within %s: %s\n\n%s",
		e.Report.Role, e.Report.Cluster, e.Waited.Round(time.Second), e.Report.Summary(), e.Report.Markdown())
}

// Check waits until every expected PackageInstall reached ReconcileSucceeded
// (with the expected package and version) or the timeout passed, and returns
// the last state of each. ReconcileFailed is polled through, because
// kapp-controller retries it and it often succeeds seconds later.
func Check(ctx context.Context, in CheckInput) (*Report, error) {
	switch {
	case in.Client == nil:
		return nil, errors.New("packages.Check: Client is required")
	case len(in.Expected) == 0:
		return nil, errors.New("packages.Check: no expected PackageInstalls (load config/packages/<profile>.yaml and call List.For)")
	case in.Timeout <= 0:
		return nil, errors.New("packages.Check: Timeout must be > 0 (take it from the config intervals)")
	}
	for _, c := range []client.Client{in.Client, in.ManagementClient} {
		if c != nil {
			if err := requireTypes(c); err != nil {
				return nil, fmt.Errorf("packages.Check: %w", err)
			}
		}
	}
	red := in.Redactor
	if red == nil {
		red = redact.New()
	}
	var last *Report
	start := time.Now()
	err := wait.For(ctx, wait.Options{
		What:     fmt.Sprintf("%d PackageInstalls on the %s cluster %s to reach ReconcileSucceeded", len(in.Expected), in.Role, in.Cluster),
		Timeout:  in.Timeout,
		Interval: in.Interval,
		Progress: in.Progress,
		Prefix:   in.Prefix,
	}, func(ctx context.Context) (bool, string, error) {
		r := &Report{Cluster: in.Cluster, Role: in.Role}
		for _, e := range in.Expected {
			r.Results = append(r.Results, observe(ctx, in, e, red))
		}
		last = r
		return !r.Failed(), r.Summary(), nil
	})
	if err == nil {
		return last, nil
	}
	var timeout *wait.TimeoutError
	if last == nil || !errors.As(err, &timeout) {
		return last, err
	}
	return last, &FailedError{Report: last, Waited: time.Since(start)}
}

func observe(ctx context.Context, in CheckInput, e Expected, red *redact.Redactor) Result {
	c := in.Client
	if e.location() == OnManagement {
		if in.ManagementClient == nil {
			return Result{Expected: e, Verdict: VerdictSkipped,
				Problem: "lives on the management cluster and no ManagementClient was given"}
		}
		c = in.ManagementClient
	}
	p := &pkgv1alpha1.PackageInstall{}
	err := c.Get(ctx, client.ObjectKey{Namespace: e.Namespace, Name: e.Name}, p)
	res := judge(e, p, err)
	res.Problem = red.String(res.Problem)
	res.State.Message = red.String(res.State.Message)
	res.State.UsefulErrorMessage = red.String(res.State.UsefulErrorMessage)
	for i := range res.State.Conditions {
		res.State.Conditions[i].Message = red.String(res.State.Conditions[i].Message)
	}
	return res
}
