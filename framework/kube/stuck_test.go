package kube

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func waitingPod(reason, msg string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-1"}, Spec: corev1.PodSpec{NodeName: "n1"},
		Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: "web", Image: "x:1",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}}}}}
}

func unschedulablePod(msg string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-2"}, Status: corev1.PodStatus{Phase: corev1.PodPending,
		Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: msg}}}}
}

func TestPodStuck(t *testing.T) {
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want string // "" = may still heal
	}{
		{"never pull", waitingPod("ErrImageNeverPull", `Container image "x:1" is not present with pull policy of Never`), "ErrImageNeverPull: Container image \"x:1\" is not present"},
		{"pull backoff", waitingPod("ImagePullBackOff", `Back-off pulling image "x:1"`), "ImagePullBackOff: Back-off pulling image"},
		{"config error", waitingPod("CreateContainerConfigError", `configmap "c" not found`), `CreateContainerConfigError: configmap "c" not found (pod ns/web-1, container web, image x:1, node n1)`},
		{"failed pull", waitingPod("ErrImagePull", "rpc error"), "ErrImagePull: rpc error"},
		{"creating", waitingPod("ContainerCreating", ""), ""},
		{"crash loop", waitingPod("CrashLoopBackOff", "back-off 10s"), ""},
		{"cordoned everywhere", unschedulablePod("0/2 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 1 node(s) were unschedulable. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."), "Unschedulable: 0/2 nodes are available"},
		{"too big", unschedulablePod("0/2 nodes are available: 2 Insufficient memory. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."), "Unschedulable: 0/2 nodes are available: 2 Insufficient memory"},
		{"selector", unschedulablePod("0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector."), "Unschedulable"},
		{"node starting", unschedulablePod("0/1 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }."), ""},
		{"ports in use", unschedulablePod("0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports."), ""},
		{"unparsed", unschedulablePod("no nodes available to schedule pods"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := PodStuck(tc.pod)
			if (got == "") != (tc.want == "") || !strings.HasPrefix(got, tc.want) {
				t.Errorf("PodStuck = %q, want prefix %q", got, tc.want)
			}
		})
	}
}

func TestDeploymentStuckOnARefusedCreate(t *testing.T) {
	dep := &appsv1.Deployment{}
	dep.Namespace, dep.Name = "ns", "web"
	dep.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate",
		Message: `Internal error occurred: failed calling webhook "deny.example.com": failed to call webhook: context deadline exceeded`}}
	got := DeploymentStuck(dep, nil)
	if !strings.HasPrefix(got, `ReplicaFailure FailedCreate: Internal error occurred: failed calling webhook "deny.example.com"`) || !strings.HasSuffix(got, "(Deployment ns/web)") {
		t.Errorf("DeploymentStuck = %q", got)
	}
	dep.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetCreated"}}
	if got := DeploymentStuck(dep, nil); got != "" {
		t.Errorf("a Deployment that progresses is not stuck: %q", got)
	}
	// Not read back yet: its pods still say.
	if got := DeploymentStuck(nil, []corev1.Pod{*waitingPod("ErrImageNeverPull", "not present")}); !strings.HasPrefix(got, "ErrImageNeverPull: not present") {
		t.Errorf("DeploymentStuck(nil, stuck pod) = %q", got)
	}
}
