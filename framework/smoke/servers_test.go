package smoke

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/tkg-e2e/harness/framework/assert/asserttest"
)

func TestServersStateDoneOnDistinctNodes(t *testing.T) {
	done, state, bs := serversState(&appsv1.Deployment{}, []corev1.Pod{readyPod("web-b", "n2", "10.0.2.1"), readyPod("web-a", "n1", "10.0.1.1")}, 2)
	if !done || len(bs) != 2 || bs[0].Node != "n1" || bs[1].IP != "10.0.2.1" {
		t.Fatalf("done=%v backends=%+v state=%s", done, bs, state)
	}
	asserttest.Says(t, "state", state, "web: 2/2 replicas ready (web-a on n1, web-b on n2)")
}

func TestServersStateNamesThePodInTheWay(t *testing.T) {
	done, state, _ := serversState(&appsv1.Deployment{}, []corev1.Pod{readyPod("web-a", "n1", "10.0.1.1"), pullingPod("web-xyz", "n2")}, 2)
	if done {
		t.Fatal("done with a pod pulling its image")
	}
	asserttest.Says(t, "state", state, "web: 1/2 replicas ready (web-a on n1)",
		`pod web-xyz on node n2 ImagePullBackOff: Back-off pulling image "busybox:1.35.0"`)
}

func TestServersStateTwoReadyOnOneNodeIsNotDone(t *testing.T) {
	done, state, _ := serversState(&appsv1.Deployment{}, []corev1.Pod{readyPod("web-a", "n1", "10.0.1.1"), readyPod("web-b", "n1", "10.0.1.2")}, 2)
	if done {
		t.Fatal("two servers on one node prove nothing about a second node")
	}
	asserttest.Says(t, "state", state, "web-a, web-b share node n1")
}

func TestServersStateWithoutPodsQuotesTheDeployment(t *testing.T) {
	dep := &appsv1.Deployment{Status: appsv1.DeploymentStatus{Conditions: []appsv1.DeploymentCondition{{
		Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate",
		Message: `pods "web-5d8f" is forbidden: violates PodSecurity "restricted:latest"`}}}}
	_, state, _ := serversState(dep, nil, 2)
	asserttest.Says(t, "state", state, "web: 0/2 replicas ready", "no pods yet (Deployment ReplicaFailure FailedCreate: pods \"web-5d8f\" is forbidden")
	_, state, _ = serversState(nil, nil, 1)
	asserttest.Says(t, "state", state, "the Deployment does not exist")
}
