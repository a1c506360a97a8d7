package smoke

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/wait"
)

// CleanupInput is the input of DeleteLeftovers.
type CleanupInput struct {
	Cluster *kube.Cluster
	// Timeout bounds the wait for the namespaces to be gone; Poll is its period.
	Timeout  time.Duration
	Poll     time.Duration
	Progress io.Writer
	Prefix   string
}

// DeleteLeftovers deletes every namespace labelled LabelKey=LabelValue and
// waits until they are gone, for a run that was killed before Run's own
// cleanup. It returns the namespaces it deleted. Every smoke namespace on
// the cluster is deleted, so do not call it while another run's smoke test
// uses the same cluster.
func DeleteLeftovers(ctx context.Context, in CleanupInput) ([]string, error) {
	var errs []string
	if in.Cluster == nil || in.Cluster.Client == nil {
		errs = append(errs, "Cluster is nil or has no Client: pass the *kube.Cluster of the workload cluster")
	}
	errs = append(errs, wait.Timeouts{"Timeout": in.Timeout, "Poll": in.Poll}.Missing("")...)
	if err := wait.Invalid("smoke.DeleteLeftovers", errs); err != nil {
		return nil, err
	}
	list := corev1.NamespaceList{}
	if err := in.Cluster.Client.List(ctx, &list, client.MatchingLabels{LabelKey: LabelValue}); err != nil {
		return nil, fmt.Errorf("listing namespaces labelled %s=%s: %w", LabelKey, LabelValue, err)
	}
	var names []string
	for _, ns := range list.Items {
		names = append(names, ns.Name)
	}
	sort.Strings(names)
	prefix := in.Prefix
	if prefix == "" {
		prefix = "[smoke]"
	}
	return names, deleteNamespaces(ctx, in.Cluster.Client, names, wait.Options{Timeout: in.Timeout, Interval: in.Poll,
		Progress: in.Progress, Prefix: prefix})
}

// deleteNamespaces deletes the namespaces and waits until they are gone: a
// namespace stuck Terminating (a finalizer, a pod that does not stop) is an
// error of its own, not something to leave for the next run to find.
func deleteNamespaces(ctx context.Context, c client.Client, names []string, opts wait.Options) error {
	if len(names) == 0 {
		return nil
	}
	var errs []error
	for _, name := range names {
		err := c.Delete(ctx, namespace(name), client.PropagationPolicy("Background"))
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting namespace %s: %w", name, err))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	opts.What = "namespace " + strings.Join(names, ", ") + " deleted"
	return wait.For(ctx, opts, func(ctx context.Context) (bool, string, error) {
		var left []string
		for _, name := range names {
			ns := corev1.Namespace{}
			err := c.Get(ctx, client.ObjectKey{Name: name}, &ns)
			switch {
			case apierrors.IsNotFound(err):
				continue
			case err != nil:
				return false, "", err
			}
			left = append(left, name+" "+terminatingState(&ns))
		}
		if len(left) == 0 {
			return true, "gone", nil
		}
		return false, strings.Join(left, "; "), nil
	})
}

// terminatingState says what holds a namespace: the controller's conditions
// name the finalizers and resources that remain.
func terminatingState(ns *corev1.Namespace) string {
	state := string(ns.Status.Phase)
	for _, c := range ns.Status.Conditions {
		if c.Status == corev1.ConditionTrue && c.Message != "" {
			state += fmt.Sprintf(" (%s: %s)", c.Type, c.Message)
		}
	}
	return state
}
