package smoke

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// readyNode is a Ready Linux node; taints are added as given.
func readyNode(name string, taints ...corev1.Taint) corev1.Node {
	return corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelOSStable: "linux", corev1.LabelHostname: name}},
		Spec:       corev1.NodeSpec{Taints: taints},
		Status:     corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
	}
}

// controlPlaneTaint is the taint kubeadm (and so CAPD) puts on a control-plane node.
var controlPlaneTaint = corev1.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}

func readyPod(name, node, ip string) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: serverLabels()},
		Spec:       corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
}

func pullingPod(name, node string) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: serverLabels()},
		Spec:       corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{Phase: corev1.PodPending,
			ContainerStatuses: []corev1.ContainerStatus{{Name: serverName, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
				Reason: "ImagePullBackOff", Message: `Back-off pulling image "busybox:1.35.0"`}}}}},
	}
}

// scriptLog is the log clientScript prints on node from for the given
// backends when every check passes, except the backends named in fail. The
// Service is answered by the backend on the same node, if any (kube-proxy
// may choose any; this one works whatever else is broken).
func scriptLog(from, host, serviceIP string, backends []Backend, fail ...string) string {
	failing := map[string]bool{}
	for _, f := range fail {
		failing[f] = true
	}
	var targets string
	for _, b := range backends {
		targets += " " + b.Pod + "=" + backendURL(b.IP)
	}
	answer := backends[0]
	for _, b := range backends {
		if b.Node == from {
			answer = b
		}
	}
	log := fmt.Sprintf("client on node %s: DNS, Service and pod IPs (%s)\n", from, targets)
	log += fmt.Sprintf("smoke dns host=%s ok address=%s\n", host, serviceIP)
	log += fmt.Sprintf("smoke request via=service target=%s ok answer=pod=%s node=%s ip=%s\n", host, answer.Pod, answer.Node, answer.IP)
	failed := 0
	for _, b := range backends {
		if failing[b.Pod] {
			failed = 1
			log += fmt.Sprintf("smoke request via=pod-ip target=%s url=%s fail error=wget: download timed out\n", b.Pod, backendURL(b.IP))
			continue
		}
		log += fmt.Sprintf("smoke request via=pod-ip target=%s url=%s ok answer=pod=%s node=%s ip=%s\n", b.Pod, backendURL(b.IP), b.Pod, b.Node, b.IP)
	}
	return log + fmt.Sprintf("smoke done failed=%d\n", failed)
}
