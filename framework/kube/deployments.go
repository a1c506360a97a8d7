package kube

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/wait"
)

// DeploymentsInput is the input of WaitDeploymentsAvailable.
type DeploymentsInput struct {
	Cluster *Cluster
	// Names are Deployments that must exist and be Available.
	Names []types.NamespacedName
	// Selector adds every Deployment (all namespaces) carrying these labels,
	// e.g. everything `clusterctl init` installed; MinCount of them must exist.
	Selector map[string]string
	// SelectorHasKey selects Deployments that carry this label key, any value.
	SelectorHasKey string
	MinCount       int
	// What is waited for, e.g. "providers on bootstrap".
	What     string
	Timeout  time.Duration
	Interval time.Duration
	// Grace is how long a Deployment may stay stuck (DeploymentStuck)
	// before the wait ends with it as the cause; 0 is wait.DefaultGrace.
	Grace    time.Duration
	Progress io.Writer
	Prefix   string
}

func (in DeploymentsInput) validate() error {
	var errs []string
	if in.Cluster == nil {
		errs = append(errs, "Cluster is nil")
	}
	if len(in.Names) == 0 && in.Selector == nil && in.SelectorHasKey == "" {
		errs = append(errs, "no Deployments selected: set Names, Selector or SelectorHasKey")
	}
	if in.What == "" {
		errs = append(errs, "What is empty")
	}
	if in.Timeout <= 0 {
		errs = append(errs, "Timeout must be > 0 (set it from the config intervals)")
	}
	if len(errs) > 0 {
		return fmt.Errorf("kube.WaitDeploymentsAvailable: invalid input: %s", strings.Join(errs, "; "))
	}
	return nil
}

// WaitDeploymentsAvailable waits until every selected Deployment has rolled
// out and reports Available. The state names the Deployments that are not,
// with the reason of one of their pods ("capd-system/capd-controller-manager
// 0/1 (pod ...: ContainerCreating)").
func WaitDeploymentsAvailable(ctx context.Context, in DeploymentsInput) error {
	if err := in.validate(); err != nil {
		return err
	}
	return wait.For(ctx, wait.Options{What: in.What + " Deployments Available", Timeout: in.Timeout,
		Interval: in.Interval, Progress: in.Progress, Prefix: in.Prefix, Grace: in.Grace},
		func(ctx context.Context) (bool, string, error) {
			deps, missing, err := selectDeployments(ctx, in)
			if err != nil {
				return false, "", err
			}
			var notReady []string
			var stuck string
			ready := 0
			for i := range deps {
				d := &deps[i]
				if ok, why := DeploymentAvailable(d); ok {
					ready++
				} else {
					pods := podsOf(ctx, in.Cluster.Client, d)
					if len(notReady) == 0 {
						why += podHint(pods)
					}
					if stuck == "" {
						stuck = DeploymentStuck(d, pods)
					}
					notReady = append(notReady, fmt.Sprintf("%s/%s %s", d.Namespace, d.Name, why))
				}
			}
			for _, m := range missing {
				notReady = append(notReady, m+" not found")
			}
			total := len(deps) + len(missing)
			state := fmt.Sprintf("%d/%d Available", ready, total)
			if len(notReady) > 0 {
				state += ": " + strings.Join(notReady, ", ")
			}
			if in.MinCount > 0 && total < in.MinCount {
				return false, fmt.Sprintf("%s (%d of at least %d Deployments exist)", state, total, in.MinCount), nil
			}
			if stuck != "" {
				return false, state, wait.Stuck(stuck)
			}
			return len(notReady) == 0 && total > 0, state, nil
		})
}

func selectDeployments(ctx context.Context, in DeploymentsInput) ([]appsv1.Deployment, []string, error) {
	var out []appsv1.Deployment
	var missing []string
	seen := map[string]bool{}
	for _, n := range in.Names {
		d := appsv1.Deployment{}
		if err := in.Cluster.Client.Get(ctx, n, &d); err != nil {
			if client.IgnoreNotFound(err) != nil {
				return nil, nil, err
			}
			missing = append(missing, n.String())
			continue
		}
		seen[n.String()] = true
		out = append(out, d)
	}
	if in.Selector != nil || in.SelectorHasKey != "" {
		sel := labels.SelectorFromSet(in.Selector)
		if in.SelectorHasKey != "" {
			sel = labels.NewSelector()
			req, err := labels.NewRequirement(in.SelectorHasKey, "exists", nil)
			if err != nil {
				return nil, nil, wait.Permanent(err)
			}
			sel = sel.Add(*req)
		}
		list := appsv1.DeploymentList{}
		if err := in.Cluster.Client.List(ctx, &list, client.MatchingLabelsSelector{Selector: sel}); err != nil {
			return nil, nil, err
		}
		for _, d := range list.Items {
			key := d.Namespace + "/" + d.Name
			if !seen[key] {
				seen[key] = true
				out = append(out, d)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Namespace+"/"+out[i].Name < out[j].Namespace+"/"+out[j].Name
	})
	return out, missing, nil
}

// DeploymentAvailable reports whether a Deployment has rolled out its current
// generation and is Available, and if not, why in a few words.
func DeploymentAvailable(d *appsv1.Deployment) (bool, string) {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	progress := fmt.Sprintf("%d/%d available", d.Status.AvailableReplicas, want)
	if d.Status.ObservedGeneration < d.Generation {
		return false, progress + ", generation not observed yet"
	}
	if d.Status.UpdatedReplicas < want || d.Status.AvailableReplicas < want {
		return false, progress
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable {
			if c.Status == corev1.ConditionTrue {
				return true, progress
			}
			return false, progress + ", " + c.Reason
		}
	}
	return false, progress + ", no Available condition yet"
}

// podsOf lists a Deployment's pods; nil when they cannot be read (the
// wait's state then has no pod hint, which is all they are for).
func podsOf(ctx context.Context, c client.Client, d *appsv1.Deployment) []corev1.Pod {
	if d.Spec.Selector == nil {
		return nil
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil
	}
	pods := corev1.PodList{}
	if err := c.List(ctx, &pods, client.InNamespace(d.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil
	}
	return pods.Items
}

// podHint says why the first not-ready pod of a Deployment is not ready.
func podHint(pods []corev1.Pod) string {
	if len(pods) == 0 {
		return " (no pods)"
	}
	for _, p := range pods {
		if why := PodNotReadyReason(&p); why != "" {
			return fmt.Sprintf(" (pod %s: %s)", p.Name, why)
		}
	}
	return ""
}

// PodNotReadyReason returns "" for a Ready pod, else the most telling reason.
func PodNotReadyReason(p *corev1.Pod) string {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Waiting != nil && cs.State.Waiting.Reason != "" {
			why := cs.State.Waiting.Reason
			// A crash loop says nothing by itself: add how the last run ended
			// (e.g. CAPD's "too many open files" when the host's inotify limits are exhausted).
			if t := cs.LastTerminationState.Terminated; t != nil {
				why += fmt.Sprintf(", %d restarts, last exit %d %s: %s", cs.RestartCount, t.ExitCode, t.Reason, lastLine(t.Message, 160))
			} else if cs.State.Waiting.Message != "" {
				why += ": " + lastLine(cs.State.Waiting.Message, 160)
			}
			return why
		}
		if cs.State.Terminated != nil {
			return "terminated: " + cs.State.Terminated.Reason
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status != corev1.ConditionTrue {
			return "unschedulable: " + truncate(c.Message, 120)
		}
		if c.Type == corev1.PodReady && c.Status != corev1.ConditionTrue {
			return "not ready (" + string(p.Status.Phase) + ")"
		}
	}
	if p.Status.Phase != corev1.PodRunning && p.Status.Phase != corev1.PodSucceeded {
		return string(p.Status.Phase)
	}
	return ""
}

// lastLine returns the last non-empty line of s, cut to n bytes.
func lastLine(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return truncate(strings.TrimSpace(lines[len(lines)-1]), n)
}
