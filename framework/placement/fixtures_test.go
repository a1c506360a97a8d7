package placement

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Builders for hand-made pods and nodes shaped like what the API returns
// (owner references, pod-template-hash label, mirror annotation), so the
// matching logic is exercised on realistic objects.

func node(name string, controlPlane bool) corev1.Node {
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	if controlPlane {
		n.Labels["node-role.kubernetes.io/control-plane"] = ""
	}
	return n
}

type podOpt func(*corev1.Pod)

func basePod(ns, name, nodeName string, opts ...podOpt) corev1.Pod {
	p := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{}, Annotations: map[string]string{}},
		Spec:       corev1.PodSpec{NodeName: nodeName},
		Status: corev1.PodStatus{
			Phase:             corev1.PodRunning,
			Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "manager", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}},
		},
	}
	for _, o := range opts {
		o(&p)
	}
	return p
}

func owner(kind, name string) podOpt {
	yes := true
	return func(p *corev1.Pod) {
		p.OwnerReferences = append(p.OwnerReferences, metav1.OwnerReference{Kind: kind, Name: name, Controller: &yes})
	}
}

// deployPod is a pod of Deployment d: owner ReplicaSet d-<hash>, label pod-template-hash.
func deployPod(ns, d, hash, suffix, nodeName string, opts ...podOpt) corev1.Pod {
	opts = append([]podOpt{owner("ReplicaSet", d+"-"+hash), func(p *corev1.Pod) { p.Labels["pod-template-hash"] = hash }}, opts...)
	return basePod(ns, d+"-"+hash+"-"+suffix, nodeName, opts...)
}

func dsPod(ns, ds, suffix, nodeName string, opts ...podOpt) corev1.Pod {
	return basePod(ns, ds+"-"+suffix, nodeName, append([]podOpt{owner("DaemonSet", ds)}, opts...)...)
}

func staticPod(component, nodeName string, opts ...podOpt) corev1.Pod {
	opts = append([]podOpt{owner("Node", nodeName), func(p *corev1.Pod) { p.Annotations[mirrorPodAnnotation] = "abc" }}, opts...)
	return basePod("kube-system", component+"-"+nodeName, nodeName, opts...)
}

// crashLooping makes the pod look like `kubectl get pods` shows CrashLoopBackOff.
func crashLooping(restarts int32) podOpt {
	return func(p *corev1.Pod) {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady"}}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{
			Name: "manager", RestartCount: restarts,
			State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 40s restarting failed container=manager"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1}},
		}}
	}
}

func restarted(n int32) podOpt {
	return func(p *corev1.Pod) { p.Status.ContainerStatuses[0].RestartCount = n }
}

func terminating() podOpt {
	return func(p *corev1.Pod) { now := metav1.Now(); p.DeletionTimestamp = &now }
}

// lastExit sets the exit code of the first container's last termination,
// after crashLooping.
func lastExit(code int32) podOpt {
	return func(p *corev1.Pod) { p.Status.ContainerStatuses[0].LastTerminationState.Terminated.ExitCode = code }
}

// neverReady is a pod whose container runs but never passes its readiness probe.
func neverReady() podOpt {
	return func(p *corev1.Pod) {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady"}}
		p.Status.ContainerStatuses[0].Ready = false
	}
}

// succeeded is a completed pod, as a Job leaves it.
func succeeded() podOpt {
	return func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodSucceeded
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "PodCompleted"}}
		p.Status.ContainerStatuses[0].Ready = false
		p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}
	}
}
