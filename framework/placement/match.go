package placement

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// mirrorPodAnnotation is set by the kubelet on the API copy of a static pod.
const mirrorPodAnnotation = "kubernetes.io/config.mirror"

// matches reports whether pod belongs to component c. Owner references are
// read from the pod alone, so matching needs no ReplicaSet lookups: a
// Deployment's ReplicaSet is named "<deployment>-<pod-template-hash>" and the
// pod carries that hash as a label.
func (c Component) matches(p *corev1.Pod) bool {
	if !slices.Contains(c.NamespaceList(), p.Namespace) {
		return false
	}
	m := c.Match
	switch {
	case m.NamePrefix != "":
		return strings.HasPrefix(p.Name, m.NamePrefix)
	case m.Deployment != "":
		rs := controllerOf(p, "ReplicaSet")
		if rs == "" {
			return false
		}
		if hash := p.Labels["pod-template-hash"]; hash != "" {
			return rs == m.Deployment+"-"+hash
		}
		// Without the label, fall back to the name shape: the remainder after
		// "<deployment>-" is a hash without dashes.
		rest, ok := strings.CutPrefix(rs, m.Deployment+"-")
		return ok && rest != "" && !strings.Contains(rest, "-")
	case m.DaemonSet != "":
		return controllerOf(p, "DaemonSet") == m.DaemonSet
	case m.StatefulSet != "":
		return controllerOf(p, "StatefulSet") == m.StatefulSet
	case m.StaticPod != "":
		_, mirror := p.Annotations[mirrorPodAnnotation]
		return mirror && p.Name == m.StaticPod+"-"+p.Spec.NodeName
	}
	return false
}

// controllerOf returns the name of the pod's controlling owner of the kind.
func controllerOf(p *corev1.Pod, kind string) string {
	for _, o := range p.OwnerReferences {
		if o.Kind == kind && (o.Controller == nil || *o.Controller) {
			return o.Name
		}
	}
	return ""
}

// isControlPlane reports whether a node carries a control-plane role label
// (kubeadm's current label, or the one it used before v1.24).
func isControlPlane(n *corev1.Node) bool {
	_, cp := n.Labels["node-role.kubernetes.io/control-plane"]
	_, master := n.Labels["node-role.kubernetes.io/master"]
	return cp || master
}

// counts reports whether a pod takes part in the evaluation. Terminating pods
// are on their way out (a rollout, a move) and completed pods did their job.
func counts(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded
}

// Describe says how the row finds its pods, for reports.
func (m Match) Describe() string {
	switch {
	case m.NamePrefix != "":
		return fmt.Sprintf("name prefix %q", m.NamePrefix)
	case m.Deployment != "":
		return fmt.Sprintf("Deployment %s", m.Deployment)
	case m.DaemonSet != "":
		return fmt.Sprintf("DaemonSet %s", m.DaemonSet)
	case m.StatefulSet != "":
		return fmt.Sprintf("StatefulSet %s", m.StatefulSet)
	case m.StaticPod != "":
		return fmt.Sprintf("static pod %s-{node}", m.StaticPod)
	}
	return "nothing"
}
