package placement

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/redact"
	"github.com/tkg-e2e/harness/framework/wait"
)

// CheckInput describes one placement check of a live cluster.
type CheckInput struct {
	// Client lists pods and nodes of the cluster under test. Required.
	Client client.Client
	// Clientset fetches the last log lines of failing pods; nil skips logs
	// (the report then says the logs were not fetched).
	Clientset kubernetes.Interface
	Matrix    *Matrix
	Role      Role
	// Cluster names the cluster in the report.
	Cluster string
	// Timeout bounds how long the cluster may take to settle into the matrix
	// (pods still starting after a create or a move). From the config intervals.
	Timeout time.Duration
	// Interval between evaluations; zero lets wait.For choose.
	Interval time.Duration
	// LogLines is how many log lines to keep per failing container (default 20).
	LogLines int64
	// MaxLogPods bounds how many failing pods of one row get their logs fetched (default 3).
	MaxLogPods int
	// Redactor masks secrets in the fetched log lines before they enter the
	// report (and so the error message and artifacts). Nil still masks
	// secret shapes (keys, tokens) with redact.New().
	Redactor *redact.Redactor
	Progress io.Writer
	Prefix   string
}

// FailedError is returned when the cluster still deviates from the matrix at
// the deadline. Its message carries the whole rendered matrix and every
// deviation, so one failure message shows all of it.
type FailedError struct {
	Report   *Report
	Markdown string
	Waited   time.Duration
}

func (e *FailedError) Error() string {
	return fmt.Sprintf("placement check of the %s failed after %s: %s\n\n%s",
		e.Report.title(), e.Waited.Round(time.Second), e.Report.Summary(), e.Markdown)
}

// Check evaluates the cluster against the matrix until it matches or the
// timeout passes. It returns the last report in both cases; on failure the
// error is a *FailedError (or the reason the cluster could not be read).
func Check(ctx context.Context, in CheckInput) (*Report, error) {
	switch {
	case in.Client == nil:
		return nil, errors.New("placement.Check: Client is required")
	case in.Matrix == nil:
		return nil, errors.New("placement.Check: Matrix is required (placement.Load a config/placement/*.yaml file)")
	case in.Timeout <= 0:
		return nil, errors.New("placement.Check: Timeout must be > 0 (take it from the config intervals, e.g. placement/settle)")
	case !in.Matrix.HasRole(in.Role):
		return nil, fmt.Errorf("placement.Check: matrix %s (%s) has no column for role %q (it declares %s)",
			in.Matrix.Name, in.Matrix.Source, in.Role, roleList(in.Matrix.Roles))
	}
	var last *Report
	start := time.Now()
	err := wait.For(ctx, wait.Options{
		What:     fmt.Sprintf("pods of the %s cluster %s to match placement matrix %s", in.Role, in.Cluster, in.Matrix.Name),
		Timeout:  in.Timeout,
		Interval: in.Interval,
		Progress: in.Progress,
		Prefix:   in.Prefix,
	}, func(ctx context.Context) (bool, string, error) {
		snap, err := Snap(ctx, in.Client)
		if err != nil {
			return false, "", err
		}
		r, err := Evaluate(in.Matrix, in.Role, in.Cluster, snap)
		if err != nil {
			return false, "", wait.Permanent(err)
		}
		last = r
		return !r.Failed(), r.Summary(), nil
	})
	if err == nil {
		return last, nil
	}
	if last == nil {
		return nil, fmt.Errorf("placement check of the %s cluster %s: could not read its pods and nodes: %w", in.Role, in.Cluster, err)
	}
	var timeout *wait.TimeoutError
	if !errors.As(err, &timeout) {
		return last, err
	}
	// Logs are fetched once, for the final report only: fetching them on every
	// poll would cost API calls for pods that recover a moment later.
	addLogs(context.WithoutCancel(ctx), in, last)
	return last, &FailedError{Report: last, Markdown: Markdown(in.Matrix, last), Waited: time.Since(start)}
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
