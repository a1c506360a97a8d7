package placement

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/tkg-e2e/harness/framework/assert"
	"github.com/tkg-e2e/harness/framework/kube"
)

// Snapshot is what a cluster runs: the input of Evaluate.
type Snapshot struct {
	Pods  []corev1.Pod
	Nodes []corev1.Node
}

// Evaluate checks a snapshot against the matrix column for role. It is pure:
// no API calls, so every verdict can be tested with hand-made pods.
func Evaluate(m *Matrix, role, cluster string, snap Snapshot) (*Report, error) {
	if m == nil {
		return nil, fmt.Errorf("placement: no matrix given")
	}
	if !m.HasRole(role) {
		return nil, fmt.Errorf("placement: matrix %s (%s) has no column for role %q (it declares %s)", m.Name, m.Source, role, assert.RoleList(m.Roles))
	}
	nodes := map[string]*corev1.Node{}
	for i := range snap.Nodes {
		nodes[snap.Nodes[i].Name] = &snap.Nodes[i]
	}
	r := &Report{Matrix: m.Name, Role: role, Cluster: cluster, Nodes: len(snap.Nodes), matrix: m}
	// A pod bound to a node that no longer exists (a Machine a rollout,
	// scale-down or remediation deleted) runs nowhere: the pod garbage
	// collector deletes it some 40 s later. It is left out like a pod
	// being deleted, and counted, instead of failing readiness until then.
	counts := func(p *corev1.Pod) bool {
		return counts(p) && (p.Spec.NodeName == "" || nodes[p.Spec.NodeName] != nil)
	}
	for i := range snap.Pods {
		if p := &snap.Pods[i]; p.Spec.NodeName != "" && nodes[p.Spec.NodeName] == nil && p.DeletionTimestamp == nil {
			r.OnGoneNodes = append(r.OnGoneNodes, PodRef{Namespace: p.Namespace, Name: p.Name, Node: p.Spec.NodeName})
		}
	}

	matched := map[string]bool{}
	for _, c := range m.Components {
		var pods []*corev1.Pod
		for i := range snap.Pods {
			p := &snap.Pods[i]
			if counts(p) && c.matches(p) {
				pods = append(pods, p)
				matched[p.Namespace+"/"+p.Name] = true
			}
		}
		r.Results = append(r.Results, evaluateRow(m, c, role, pods, nodes))
	}
	// A pod a row matched is judged by that row alone (which may allow
	// restarts or make it optional); every other pod of a system namespace
	// still has to be healthy.
	system := m.SystemNamespaceList()
	var unlisted []*corev1.Pod
	for i := range snap.Pods {
		p := &snap.Pods[i]
		if !counts(p) {
			continue
		}
		r.Pods++
		if slices.Contains(system, p.Namespace) && !matched[p.Namespace+"/"+p.Name] {
			unlisted = append(unlisted, p)
		}
	}
	r.Unlisted, r.Unmatched = evaluateUnlisted(m, unlisted, nodes)
	return r, nil
}

func evaluateRow(m *Matrix, c Component, role string, pods []*corev1.Pod, nodes map[string]*corev1.Node) Result {
	exp := c.Roles[role]
	res := Result{Component: c.Name, Namespaces: c.NamespaceList(), Expectation: exp}
	wantReady, maxRestarts := m.effectiveReadiness(c)

	var unexpected, unready int
	for _, p := range pods {
		ps := podState(p, nodes)
		switch exp {
		case MustNot:
			ps.Problems = append(ps.Problems, fmt.Sprintf("must not run on a %s cluster; runs on %s", role, where(ps)))
			unexpected++
		case ControlPlaneOnly:
			if ps.NodeRole != "control-plane" {
				ps.Problems = append(ps.Problems, fmt.Sprintf("must run on control-plane nodes only; runs on %s", where(ps)))
				unexpected++
			}
		}
		if exp != MustNot {
			if probs := readinessProblems(ps, wantReady, maxRestarts); len(probs) > 0 {
				ps.Problems = append(ps.Problems, probs...)
				unready++
			}
		}
		res.Pods = append(res.Pods, ps)
	}

	n := len(pods)
	switch {
	case exp == MustNot && n == 0:
		res.Verdict, res.Detail = assert.Absent, "not running, as required"
	case exp == MustNot:
		res.Verdict, res.Detail = assert.Unexpected, fmt.Sprintf("%d pod(s) on %s", n, nodeList(res.Pods))
	case n == 0 && exp == Optional:
		res.Verdict, res.Detail = assert.Absent, "not running (optional)"
	case n == 0:
		res.Verdict, res.Detail = assert.Missing, fmt.Sprintf("no pod in %s matches %s", strings.Join(res.Namespaces, " or "), c.Match.Describe())
	case unexpected > 0:
		res.Verdict, res.Detail = assert.Unexpected, fmt.Sprintf("%d/%d pod(s) off the control plane", unexpected, n)
	case unready > 0:
		res.Verdict, res.Detail = assert.NotReady, fmt.Sprintf("%d/%d pod(s) failing readiness", unready, n)
	default:
		res.Verdict, res.Detail = assert.OK, fmt.Sprintf("%d pod(s) ready", n)
	}
	return res
}

func podState(p *corev1.Pod, nodes map[string]*corev1.Node) PodState {
	ps := PodState{
		PodRef:  PodRef{Namespace: p.Namespace, Name: p.Name, Node: p.Spec.NodeName},
		Phase:   string(p.Status.Phase),
		Reason:  p.Status.Reason,
		Message: p.Status.Message,
	}
	switch n, ok := nodes[p.Spec.NodeName]; {
	case p.Spec.NodeName == "":
	case !ok:
		ps.NodeRole = "unknown node"
	case isControlPlane(n):
		ps.NodeRole = "control-plane"
	default:
		ps.NodeRole = "worker"
	}
	for _, c := range p.Status.Conditions {
		switch {
		case c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue:
			ps.Ready = true
		case c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse:
			// A pending pod's only explanation is the scheduler's (taints, resources).
			ps.Reason, ps.Message = assert.Or(c.Reason, "–"), c.Message
		}
	}
	statuses := slices.Concat(p.Status.InitContainerStatuses, p.Status.ContainerStatuses)
	for _, cs := range statuses {
		ps.Restarts += cs.RestartCount
		if justRestartedAfterFailure(cs) {
			ps.Ready = false
		}
	}
	if reason, msg := containerReason(statuses); reason != "" {
		ps.Reason, ps.Message = reason, msg
	}
	ps.Stuck = kube.PodStuck(p)
	return ps
}

// containerReason picks the reason a reader needs first: a waiting reason
// (CrashLoopBackOff, ImagePullBackOff) with the last termination that caused it.
func containerReason(statuses []corev1.ContainerStatus) (reason, message string) {
	for _, cs := range statuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" && w.Reason != "ContainerCreating" && w.Reason != "PodInitializing" {
			reason, message = w.Reason, w.Message
			if t := cs.LastTerminationState.Terminated; t != nil {
				reason += fmt.Sprintf(" (container %s last exited: %s, code %d)", cs.Name, t.Reason, t.ExitCode)
			}
			return reason, message
		}
	}
	for _, cs := range statuses {
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
			return fmt.Sprintf("%s (container %s exit code %d)", t.Reason, cs.Name, t.ExitCode), t.Message
		}
	}
	// Between two crashes the container runs for a moment; the last
	// termination is then the only trace of the crashloop.
	for _, cs := range statuses {
		if t := cs.LastTerminationState.Terminated; t != nil && (!cs.Ready || justRestartedAfterFailure(cs)) && t.ExitCode != 0 {
			return fmt.Sprintf("restarted (container %s last exited: %s, code %d)", cs.Name, t.Reason, t.ExitCode), t.Message
		}
	}
	return "", ""
}

// crashSettle is how long a container must have run since it last failed
// before its pod counts as ready. A crashlooping container without a
// readiness probe is ready for the moment it runs between two crashes; a
// check that polled at that moment passed it (seen under load, where that
// moment lasts seconds). A pod that really recovered passes a poll later.
const crashSettle = 30 * time.Second

func justRestartedAfterFailure(cs corev1.ContainerStatus) bool {
	t, r := cs.LastTerminationState.Terminated, cs.State.Running
	return t != nil && t.ExitCode != 0 && r != nil && time.Since(r.StartedAt.Time) < crashSettle
}

func readinessProblems(ps PodState, wantReady bool, maxRestarts *int32) []string {
	var probs []string
	if wantReady && !ps.Ready {
		// Phase and reason are printed with the pod; the problem only says which rule failed.
		probs = append(probs, "not Ready")
	}
	if maxRestarts != nil && ps.Restarts > *maxRestarts {
		probs = append(probs, fmt.Sprintf("%d restarts, budget %d", ps.Restarts, *maxRestarts))
	}
	return probs
}

func where(ps PodState) string {
	if ps.Node == "" {
		return "no node yet (not scheduled)"
	}
	return fmt.Sprintf("node %s (%s)", ps.Node, ps.NodeRole)
}

func nodeList(pods []PodState) string {
	var names []string
	for _, p := range pods {
		n := p.Node
		if n == "" {
			n = "(unscheduled)"
		}
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return strings.Join(names, ", ")
}
