package smoke

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/wait"
)

// clientBudget splits Timeout between the clients' own retries and the wait
// for them: a client must give up and report its errors before the harness
// gives up on it, or a broken Service ends as "timed out" instead of as
// wget's own message. The clients retry for a third of Timeout; one attempt
// lasts at most Poll (at least 1 s, wget counts whole seconds) and no longer
// than lets every check's last attempt fit in another third, which leaves a
// third for scheduling and starting the pods.
func clientBudget(timeout, poll time.Duration, backends int) (budget, attempt int) {
	budget = max(1, int(timeout/3/time.Second))
	checks := time.Duration(backends + 2) // the lookup, the Service, each backend
	attempt = max(1, int(min(poll, timeout/3/checks).Round(time.Second)/time.Second))
	return budget, attempt
}

// waitClients waits until every client pod has ended (Succeeded or Failed).
func (r *runner) waitClients(ctx context.Context, nodeOf map[string]string) ([]corev1.Pod, error) {
	var pods []corev1.Pod
	what := fmt.Sprintf("%d client pods in %s to finish", len(nodeOf), r.ns)
	err := wait.For(ctx, r.waitOptions(what), func(ctx context.Context) (bool, string, error) {
		list := corev1.PodList{}
		if err := r.in.Cluster.Client.List(ctx, &list, client.InNamespace(r.ns), client.MatchingLabels{roleLabel: "client"}); err != nil {
			return false, "", err
		}
		pods = list.Items
		done, state := clientsState(pods, nodeOf)
		if cause := kube.PodsStuck(pods); !done && cause != "" {
			return false, r.in.Redactor.String(state), wait.Stuck(r.in.Redactor.String(cause))
		}
		return done, r.in.Redactor.String(state), nil
	})
	return pods, err
}

// clientsState says whether every client has ended and, while not, what
// the others are doing ("clients: 1/2 finished; client-1 for node n2
// Pending: unschedulable: ...").
func clientsState(pods []corev1.Pod, nodeOf map[string]string) (bool, string) {
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	finished := 0
	var waiting []string
	seen := map[string]bool{}
	for i := range pods {
		p := &pods[i]
		seen[p.Name] = true
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			finished++
			continue
		}
		why := kube.PodNotReadyReason(p)
		if why == "" {
			why = "running"
		}
		phase := string(p.Status.Phase)
		if phase == "" {
			phase = string(corev1.PodPending)
		}
		waiting = append(waiting, fmt.Sprintf("%s for node %s %s: %s", p.Name, nodeOf[p.Name], phase, why))
	}
	for _, name := range slices.Sorted(maps.Keys(nodeOf)) {
		if !seen[name] {
			waiting = append(waiting, fmt.Sprintf("%s for node %s does not exist", name, nodeOf[name]))
		}
	}
	state := fmt.Sprintf("clients: %d/%d finished", finished, len(nodeOf))
	if len(waiting) > 0 {
		state += "; " + strings.Join(waiting, "; ")
	}
	return finished == len(nodeOf) && len(waiting) == 0, state
}

// clientOutcome turns an ended client pod and its log into the pod's entry
// in the result, plus the problems found: a failed check, a check the log
// does not report, an exit code that contradicts the log.
func clientOutcome(p *corev1.Pod, node, log string, serviceIP string, backends []Backend) (Client, clientReport) {
	c := Client{Pod: p.Name, Node: node, Phase: string(p.Status.Phase), Log: log}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == clientContainer && cs.State.Terminated != nil {
			code := cs.State.Terminated.ExitCode
			c.ExitCode = &code
			if code != 0 {
				c.State = fmt.Sprintf("exit code %d (%s)", code, cs.State.Terminated.Reason)
			}
		}
	}
	if c.State == "" && p.Status.Phase != corev1.PodSucceeded {
		c.State = strings.TrimSpace(string(p.Status.Phase) + " " + kube.PodNotReadyReason(p) + " " + p.Status.Message)
	}
	rep := parseClientLog(node, log, serviceIP, backends)
	failedChecks := 0
	if rep.DNS != nil && !rep.DNS.OK {
		failedChecks++
	}
	for _, q := range rep.Requests {
		if !q.OK {
			failedChecks++
		}
	}
	if failedChecks == 0 && len(rep.Problems) == 0 && (c.ExitCode == nil || *c.ExitCode != 0) {
		rep.Problems = append(rep.Problems, "every check in the log passed, but the client ended "+orNone(c.State))
	}
	c.Problems = rep.Problems
	return c, rep
}
