package kube

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// stuckWaiting are the container waiting reasons the kubelet does not get
// out of by itself in a test's time: the image is not there and will not
// come (no registry here; a wrong name), or the pod refers to something
// that does not exist. ErrImagePull is a pull that failed; the kubelet
// shows it and ImagePullBackOff in turn, so both count, or every retry
// would restart the grace (which is what leaves a transient registry
// error time to clear). ContainerCreating is left out: nothing failed yet.
var stuckWaiting = map[string]string{
	"ErrImageNeverPull":          "the image is not on the node and imagePullPolicy is Never",
	"ErrImagePull":               "the image could not be pulled",
	"ImagePullBackOff":           "the image could not be pulled and the kubelet is backing off",
	"InvalidImageName":           "the image name is not valid",
	"CreateContainerConfigError": "the container's configuration refers to something missing",
	"CreateContainerError":       "the runtime refused to create the container",
}

// PodStuck is why a pod cannot become ready in a test's time, in the
// kubelet's or scheduler's words, or "" while it may still get there (being
// scheduled, pulling, starting, crash-looping: a crash may be the last). A
// wait ends early on it after its grace (wait.Stuck).
func PodStuck(p *corev1.Pod) string {
	if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded {
		return ""
	}
	for _, statuses := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for _, cs := range statuses {
			w := cs.State.Waiting
			if w == nil {
				continue
			}
			if why, ok := stuckWaiting[w.Reason]; ok {
				msg := oneLine(w.Message)
				if msg == "" {
					msg = why
				}
				image := ""
				if cs.Image != "" {
					image = ", image " + cs.Image
				}
				return fmt.Sprintf("%s: %s (pod %s/%s, container %s%s%s)", w.Reason, msg, p.Namespace, p.Name, cs.Name, image, onNode(p))
			}
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			if UnschedulableForGood(c.Message) {
				return fmt.Sprintf("Unschedulable: %s (pod %s/%s)", oneLine(c.Message), p.Namespace, p.Name)
			}
		}
	}
	return ""
}

func onNode(p *corev1.Pod) string {
	if p.Spec.NodeName == "" {
		return ""
	}
	return ", node " + p.Spec.NodeName
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// schedulerReason is one "<n> node(s) <reason>" of the scheduler's message
// "0/3 nodes are available: 1 node(s) had untolerated taint {…}, 2 node(s)
// were unschedulable. preemption: …".
var schedulerReason = regexp.MustCompile(`\d+ (?:node\(s\)|Insufficient) ?([^,.]*)`)

// healingTaints go away by themselves: a node that is starting, not yet
// initialized by its cloud provider or Cluster API, or briefly unreachable.
var healingTaints = []string{"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable", "node.cloudprovider.kubernetes.io/uninitialized",
	"node.cluster.x-k8s.io/uninitialized", "node.kubernetes.io/network-unavailable", "node.kubernetes.io/disk-pressure",
	"node.kubernetes.io/memory-pressure", "node.kubernetes.io/pid-pressure"}

// UnschedulableForGood says whether the scheduler's message lists only
// reasons no pending change lifts: every node cordoned, tainted (not by a
// starting or unhealthy node's own taints), too small for the requests, or
// not matching the pod's node selector or affinity. A message with any
// other reason (volume binding, pod affinity, ports in use: other pods may
// leave) or none parsed is not for good.
func UnschedulableForGood(msg string) bool {
	head, _, _ := strings.Cut(msg, "preemption:")
	_, list, ok := strings.Cut(head, "available:")
	if !ok {
		return false
	}
	reasons := schedulerReason.FindAllStringSubmatch(list, -1)
	if len(reasons) == 0 {
		return false
	}
	for _, m := range reasons {
		r := m[0]
		switch {
		case strings.Contains(r, "were unschedulable"),
			strings.Contains(r, "Insufficient"),
			strings.Contains(r, "didn't match Pod's node affinity/selector"),
			strings.Contains(r, "untolerated taint") && !slices.ContainsFunc(healingTaints, func(t string) bool { return strings.Contains(list, t) }):
		default:
			return false
		}
	}
	return true
}

// DeploymentStuck is why a Deployment cannot become Available in a test's
// time: its controllers were refused the ReplicaSet or its pods (an
// admission webhook, a policy, a quota: they retry and are refused again),
// or one of its pods is stuck (PodsStuck). "" while it may still get there.
// A nil d (not read back yet) is judged by its pods.
func DeploymentStuck(d *appsv1.Deployment, pods []corev1.Pod) string {
	if d == nil {
		return PodsStuck(pods)
	}
	for _, c := range d.Status.Conditions {
		refusedRS := c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == "ReplicaSetCreateError"
		refusedPods := c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue && c.Reason == "FailedCreate"
		if refusedRS || refusedPods {
			return fmt.Sprintf("%s %s: %s (Deployment %s/%s)", c.Type, c.Reason, oneLine(c.Message), d.Namespace, d.Name)
		}
	}
	return PodsStuck(pods)
}

// PodsStuck is the first of pods that is stuck (PodStuck), or "".
func PodsStuck(pods []corev1.Pod) string {
	for i := range pods {
		if cause := PodStuck(&pods[i]); cause != "" {
			return cause
		}
	}
	return ""
}
