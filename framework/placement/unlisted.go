package placement

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/tkg-e2e/harness/framework/assert"
)

// builtinSystemNamespaces are system namespaces on every cluster the harness
// checks, whether or not a row names them: a crashlooping add-on there
// breaks the cluster even when the matrix has never heard of it.
var builtinSystemNamespaces = []string{"kube-system", "tkg-system"}

// SystemNamespaceList returns, sorted, the namespaces whose every pod is
// health-checked: the built-in ones, every namespace a row names, and the
// file's systemNamespaces.
func (m *Matrix) SystemNamespaceList() []string {
	set := map[string]bool{}
	for _, ns := range slices.Concat(builtinSystemNamespaces, m.SystemNamespaces) {
		set[ns] = true
	}
	for _, c := range m.Components {
		for _, ns := range c.NamespaceList() {
			set[ns] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// workload is what the pods of one unlisted report entry share.
type workload struct {
	Namespace string
	// Kind is the owner's kind ("Deployment", "DaemonSet", "static pod";
	// "pod" for a pod without a controller), Name the owner's name.
	Kind, Name string
}

// workloadOf names the workload a pod belongs to from the pod alone, the way
// Component.matches reads owners, so a DaemonSet on ten nodes is one entry.
func workloadOf(p *corev1.Pod) workload {
	w := workload{Namespace: p.Namespace, Kind: "pod", Name: p.Name}
	if rs := controllerOf(p, "ReplicaSet"); rs != "" {
		w.Kind, w.Name = "ReplicaSet", rs
		// "<deployment>-<pod-template-hash>"; without the label, the hash is
		// the last dash-free part of the name.
		if hash := p.Labels["pod-template-hash"]; hash != "" {
			if d, ok := strings.CutSuffix(rs, "-"+hash); ok {
				w.Kind, w.Name = "Deployment", d
			}
		} else if i := strings.LastIndex(rs, "-"); i > 0 {
			w.Kind, w.Name = "Deployment", rs[:i]
		}
		return w
	}
	if _, mirror := p.Annotations[mirrorPodAnnotation]; mirror {
		if s, ok := strings.CutSuffix(p.Name, "-"+p.Spec.NodeName); ok && p.Spec.NodeName != "" {
			w.Kind, w.Name = "static pod", s
			return w
		}
	}
	for _, o := range p.OwnerReferences {
		if o.Controller == nil || *o.Controller {
			w.Kind, w.Name = o.Kind, o.Name
			break
		}
	}
	return w
}

// title is the report entry's component name: it says at once that the
// entry is not a matrix row.
func (w workload) title() string {
	return fmt.Sprintf("%s/%s (%s, no matrix row)", w.Namespace, w.Name, w.Kind)
}

// evaluateUnlisted judges the pods of system namespaces that no row matched
// by the matrix's default readiness, one result per workload (sorted by
// name), and returns the pods of the healthy ones for the hint list.
func evaluateUnlisted(m *Matrix, pods []*corev1.Pod, nodes map[string]*corev1.Node) ([]Result, []PodRef) {
	groups := map[workload][]*corev1.Pod{}
	for _, p := range pods {
		w := workloadOf(p)
		groups[w] = append(groups[w], p)
	}
	wantReady, maxRestarts := m.effectiveReadiness(Component{})
	var results []Result
	var healthy []PodRef
	for w, pods := range groups {
		res := Result{Component: w.title(), Namespaces: []string{w.Namespace}, Expectation: Unlisted, Owner: w.Kind + " " + w.Name}
		unready := 0
		for _, p := range pods {
			ps := podState(p, nodes)
			if probs := readinessProblems(ps, wantReady, maxRestarts); len(probs) > 0 {
				ps.Problems = append(ps.Problems, probs...)
				unready++
			}
			res.Pods = append(res.Pods, ps)
		}
		sort.Slice(res.Pods, func(i, j int) bool { return res.Pods[i].Name < res.Pods[j].Name })
		if unready > 0 {
			res.Verdict = assert.NotReady
			res.Detail = fmt.Sprintf("%d/%d pod(s) failing readiness; no row describes this workload, so defaults.readiness applies (%s)",
				unready, len(pods), readinessText(wantReady, maxRestarts))
		} else {
			res.Verdict, res.Detail = assert.OK, fmt.Sprintf("%d pod(s) ready; no row describes this workload (not a failure)", len(pods))
			for _, ps := range res.Pods {
				healthy = append(healthy, ps.PodRef)
			}
		}
		results = append(results, res)
	}
	sort.Slice(results, func(i, j int) bool { return results[i].Component < results[j].Component })
	sort.Slice(healthy, func(i, j int) bool {
		a, b := healthy[i], healthy[j]
		return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
	})
	return results, healthy
}

// readinessText states the rules an unlisted pod failed, so that the reader
// sees which matrix setting judged a pod no row mentions.
func readinessText(wantReady bool, maxRestarts *int32) string {
	var rules []string
	if wantReady {
		rules = append(rules, "Ready")
	}
	if maxRestarts != nil {
		rules = append(rules, fmt.Sprintf("at most %d restarts", *maxRestarts))
	}
	if len(rules) == 0 {
		return "no rule"
	}
	return strings.Join(rules, ", ")
}
