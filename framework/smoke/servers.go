package smoke

import (
	"context"
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/wait"
)

// waitServers waits until want server pods are Ready on distinct nodes and
// returns them, sorted by node.
func (r *runner) waitServers(ctx context.Context, want int) ([]Backend, error) {
	var backends []Backend
	what := fmt.Sprintf("%s/%s: %d replicas Ready on distinct nodes", r.ns, serverName, want)
	err := wait.For(ctx, r.waitOptions(what), func(ctx context.Context) (bool, string, error) {
		dep := &appsv1.Deployment{}
		if err := r.in.Cluster.Client.Get(ctx, types.NamespacedName{Namespace: r.ns, Name: serverName}, dep); err != nil {
			if client.IgnoreNotFound(err) != nil {
				return false, "", err
			}
			dep = nil
		}
		pods := corev1.PodList{}
		if err := r.in.Cluster.Client.List(ctx, &pods, client.InNamespace(r.ns), client.MatchingLabels(serverLabels())); err != nil {
			return false, "", err
		}
		done, state, bs := serversState(dep, pods.Items, want)
		backends = bs
		if !done {
			if cause := kube.DeploymentStuck(dep, pods.Items); cause != "" {
				return false, r.in.Redactor.String(state), wait.Stuck(r.in.Redactor.String(cause))
			}
		}
		return done, r.in.Redactor.String(state), nil
	})
	return backends, err
}

// serversState says whether want server pods are Ready on distinct nodes,
// and if not, what is in the way, in the words of the pod that is furthest
// from Ready ("web: 1/2 replicas ready (web-a on n1); pod web-b on node n2
// ImagePullBackOff: ..."). A Deployment that made no pods says why from its
// conditions (a quota or an admission webhook refusing them).
func serversState(dep *appsv1.Deployment, pods []corev1.Pod, want int) (bool, string, []Backend) {
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	var ready []Backend
	var notReady []string
	byNode := map[string][]string{}
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		if podReady(p) {
			ready = append(ready, Backend{Pod: p.Name, Node: p.Spec.NodeName, IP: p.Status.PodIP})
			byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p.Name)
			continue
		}
		where := "not scheduled"
		if p.Spec.NodeName != "" {
			where = "on node " + p.Spec.NodeName
		}
		notReady = append(notReady, fmt.Sprintf("pod %s %s %s", p.Name, where, kube.PodNotReadyReason(p)))
	}
	sort.Slice(ready, func(i, j int) bool { return ready[i].Node < ready[j].Node })
	state := fmt.Sprintf("%s: %d/%d replicas ready", serverName, len(ready), want)
	if len(ready) > 0 {
		state += " (" + backendsLine(ready) + ")"
	}
	var shared []string
	for node, ps := range byNode {
		if len(ps) > 1 {
			shared = append(shared, fmt.Sprintf("%s share node %s", strings.Join(ps, ", "), node))
		}
	}
	sort.Strings(shared)
	problems := append(shared, notReady...)
	if len(pods) == 0 {
		problems = append(problems, "no pods yet"+deploymentHint(dep))
	}
	if len(problems) > 0 {
		state += "; " + strings.Join(problems, "; ")
	}
	missingIP := false
	for _, b := range ready {
		missingIP = missingIP || b.IP == "" || b.Node == ""
	}
	done := len(ready) == want && len(byNode) == want && len(shared) == 0 && !missingIP
	return done, state, ready
}

func deploymentHint(dep *appsv1.Deployment) string {
	if dep == nil {
		return " (the Deployment does not exist)"
	}
	var why []string
	for _, c := range dep.Status.Conditions {
		if (c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue) ||
			(c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse) {
			why = append(why, fmt.Sprintf("%s %s: %s", c.Type, c.Reason, c.Message))
		}
	}
	if len(why) == 0 {
		return ""
	}
	return " (Deployment " + strings.Join(why, "; ") + ")"
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// waitEndpointSlices waits until the Service's EndpointSlices list every
// Ready server as a ready endpoint: the EndpointSlice controller's part of
// the path a request takes, checked on its own so that a controller that
// does not publish them fails here, by name, rather than as a client's
// timed-out request.
func (r *runner) waitEndpointSlices(ctx context.Context, backends []Backend) error {
	what := fmt.Sprintf("EndpointSlices of Service %s/%s to list the %d Ready servers", r.ns, serverName, len(backends))
	return wait.For(ctx, r.waitOptions(what), func(ctx context.Context) (bool, string, error) {
		var slices discoveryv1.EndpointSliceList
		if err := r.in.Cluster.Client.List(ctx, &slices, client.InNamespace(r.ns),
			client.MatchingLabels{discoveryv1.LabelServiceName: serverName}); err != nil {
			return false, "", err
		}
		ready := map[string]bool{}
		for _, s := range slices.Items {
			for _, e := range s.Endpoints {
				if e.Conditions.Ready == nil || *e.Conditions.Ready {
					for _, a := range e.Addresses {
						ready[a] = true
					}
				}
			}
		}
		var missing []string
		for _, b := range backends {
			if !ready[b.IP] {
				missing = append(missing, fmt.Sprintf("%s (%s)", b.Pod, b.IP))
			}
		}
		state := fmt.Sprintf("%d EndpointSlices, %d ready addresses", len(slices.Items), len(ready))
		if len(missing) > 0 {
			state += "; not listed: " + strings.Join(missing, ", ")
		}
		return len(missing) == 0, state, nil
	})
}
