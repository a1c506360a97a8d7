package smoke

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tkg-e2e/harness/framework/assert/asserttest"
)

func TestClientBudgetLeavesTheHarnessTimeToReadTheResult(t *testing.T) {
	for _, tc := range []struct {
		timeout, poll   time.Duration
		backends        int
		budget, attempt int
	}{
		{5 * time.Minute, 5 * time.Second, 3, 100, 5},
		{5 * time.Minute, 30 * time.Second, 10, 100, 8}, // 100 s over 12 checks
		{time.Minute, 250 * time.Millisecond, 2, 20, 1}, // wget counts whole seconds
		{2 * time.Second, time.Second, 1, 1, 1},
	} {
		budget, attempt := clientBudget(tc.timeout, tc.poll, tc.backends)
		if budget != tc.budget || attempt != tc.attempt {
			t.Errorf("clientBudget(%s, %s, %d) = %d, %d; want %d, %d", tc.timeout, tc.poll, tc.backends, budget, attempt, tc.budget, tc.attempt)
		}
		// The client's worst case: its budget, then one last attempt per check.
		if worst := time.Duration(budget+attempt*(tc.backends+2)) * time.Second; tc.timeout >= time.Minute && worst > tc.timeout*2/3+time.Second {
			t.Errorf("timeout %s: a client may run %s, leaving too little for scheduling", tc.timeout, worst)
		}
	}
}

func clientPodIn(name string, phase corev1.PodPhase, exit *int32) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.PodStatus{Phase: phase}}
	if exit != nil {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: clientContainer,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: *exit, Reason: "Error"}}}}
	}
	return p
}

func TestClientsStateWaitsForEveryClient(t *testing.T) {
	nodeOf := map[string]string{"client-0": "n1", "client-1": "n2", "client-2": "n3"}
	unschedulable := clientPodIn("client-1", corev1.PodPending, nil)
	unschedulable.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Message: "0/3 nodes are available: 1 Insufficient memory"}}
	done, state := clientsState([]corev1.Pod{clientPodIn("client-0", corev1.PodSucceeded, new(int32)), unschedulable}, nodeOf)
	if done {
		t.Fatal("done with a client pending and one missing")
	}
	asserttest.Says(t, "state", state, "clients: 1/3 finished", "client-1 for node n2 Pending: unschedulable: 0/3 nodes are available",
		"client-2 for node n3 does not exist")
	one := int32(1)
	done, _ = clientsState([]corev1.Pod{clientPodIn("client-0", corev1.PodSucceeded, new(int32)), clientPodIn("client-1", corev1.PodFailed, &one),
		clientPodIn("client-2", corev1.PodSucceeded, new(int32))}, nodeOf)
	if !done {
		t.Fatal("a Failed client has finished too")
	}
}

func TestClientOutcomeExitCodeMustMatchTheLog(t *testing.T) {
	one := int32(1)
	p := clientPodIn("client-0", corev1.PodFailed, &one)
	c, rep := clientOutcome(&p, "n1", scriptLog("n1", host, "10.96.0.42", twoBackends), "10.96.0.42", twoBackends)
	if c.ExitCode == nil || *c.ExitCode != 1 || c.State != "exit code 1 (Error)" {
		t.Errorf("client = %+v", c)
	}
	if len(rep.Problems) != 1 || len(c.Problems) != 1 {
		t.Fatalf("a log that passes everything with exit code 1 must be a problem: %v", rep.Problems)
	}
	asserttest.Says(t, "problem", rep.Problems[0], "every check in the log passed, but the client ended exit code 1")

	ok := clientPodIn("client-0", corev1.PodSucceeded, new(int32))
	if c, rep := clientOutcome(&ok, "n1", scriptLog("n1", host, "10.96.0.42", twoBackends), "10.96.0.42", twoBackends); c.State != "" || len(rep.Problems) != 0 {
		t.Errorf("a passing client: %+v %v", c, rep.Problems)
	}
}
