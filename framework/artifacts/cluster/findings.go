package cluster

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tkg-e2e/harness/framework/artifacts"
)

// Findings are read from the dumped objects (unstructured), so they work
// whatever versions the cluster serves and whether or not the Cluster API
// and Carvel CRDs are installed at all.

func podNotReady(p *corev1.Pod) bool {
	switch p.Status.Phase {
	case corev1.PodSucceeded:
		return false
	case corev1.PodFailed:
		return true
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status != corev1.ConditionTrue
		}
	}
	return true
}

func toPods(objs []unstructured.Unstructured) []corev1.Pod {
	out := make([]corev1.Pod, 0, len(objs))
	for i := range objs {
		var p corev1.Pod
		if runtime.DefaultUnstructuredConverter.FromUnstructured(objs[i].Object, &p) == nil {
			out = append(out, p)
		}
	}
	return out
}

func (c *collection) podFindings(pods []corev1.Pod) []artifacts.PodFinding {
	var out []artifacts.PodFinding
	for i := range pods {
		p := &pods[i]
		if !podNotReady(p) {
			continue
		}
		f := artifacts.PodFinding{Namespace: p.Namespace, Name: p.Name, Node: p.Spec.NodeName, Phase: string(p.Status.Phase),
			Reason: p.Status.Reason, Message: p.Status.Message}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse {
				f.Unschedulable = cond.Reason == corev1.PodReasonUnschedulable
				f.Reason, f.Message = cond.Reason, cond.Message
			}
		}
		statuses := append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
		for _, s := range statuses {
			f.Restarts += s.RestartCount
			if s.Ready || (s.State.Terminated != nil && s.State.Terminated.ExitCode == 0) {
				continue
			}
			cf := artifacts.ContainerFinding{Name: s.Name, Ready: s.Ready}
			switch {
			case s.State.Waiting != nil:
				cf.State, cf.Reason = "waiting", s.State.Waiting.Reason
				if s.State.Waiting.Message != "" && f.Message == "" {
					f.Message = s.State.Waiting.Message
				}
			case s.State.Terminated != nil:
				cf.State, cf.Reason = "terminated", s.State.Terminated.Reason
			case s.State.Running != nil:
				cf.State, cf.Reason = "running", "not ready"
			}
			if cf.Reason != "" && !f.Unschedulable && (f.Reason == "" || cf.State == "waiting") {
				f.Reason = cf.Reason
			}
			// A crash loop's current log is often empty; the crashed run's log says why.
			for _, prev := range []bool{false, true} {
				rel := c.podLogPath(p.Namespace, p.Name, s.Name, prev)
				if v, ok := c.tails.Load(rel); ok {
					if tail := v.(string); cf.LogTail == "" || prev && tail != "" {
						cf.LogFile, cf.LogTail = rel, tail
					}
				}
			}
			f.Containers = append(f.Containers, cf)
		}
		out = append(out, f)
	}
	return out
}

func nodeFindings(objs []unstructured.Unstructured) []artifacts.NodeFinding {
	var out []artifacts.NodeFinding
	for i := range objs {
		var n corev1.Node
		if runtime.DefaultUnstructuredConverter.FromUnstructured(objs[i].Object, &n) != nil {
			continue
		}
		ready := false
		f := artifacts.NodeFinding{Name: n.Name, Reason: "no Ready condition"}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				ready = c.Status == corev1.ConditionTrue
				f.Reason, f.Message = c.Reason, c.Message
			}
		}
		if !ready {
			out = append(out, f)
		}
	}
	return out
}

// packageFindings reports PackageInstalls whose last reconcile failed. The
// cause is in status.usefulErrorMessage, except for a missing package
// version, which kapp-controller reports only in the condition's message.
func packageFindings(objs []unstructured.Unstructured) []artifacts.PackageFinding {
	var out []artifacts.PackageFinding
	for i := range objs {
		o := objs[i].Object
		failed, condMsg := false, ""
		conds, _, _ := unstructured.NestedSlice(o, "status", "conditions")
		for _, raw := range conds {
			c, _ := raw.(map[string]any)
			if c["type"] == "ReconcileFailed" && c["status"] == "True" {
				failed = true
				condMsg, _ = c["message"].(string)
			}
		}
		if !failed {
			continue
		}
		msg, _, _ := unstructured.NestedString(o, "status", "usefulErrorMessage")
		if msg == "" {
			msg = condMsg
		}
		pkg, _, _ := unstructured.NestedString(o, "spec", "packageRef", "refName")
		ver, _, _ := unstructured.NestedString(o, "status", "version")
		if ver == "" {
			ver, _, _ = unstructured.NestedString(o, "spec", "packageRef", "versionSelection", "constraints")
		}
		out = append(out, artifacts.PackageFinding{Namespace: objs[i].GetNamespace(), Name: objs[i].GetName(), Package: pkg, Version: ver, Message: msg})
	}
	return out
}

// machineFindings reports Machines without a NodeRef. Whether the
// infrastructure was provisioned tells an infrastructure failure (no VM or
// container) from a bootstrap one (a machine that never joined).
func machineFindings(objs []unstructured.Unstructured) []artifacts.MachineFinding {
	var out []artifacts.MachineFinding
	for i := range objs {
		o := objs[i].Object
		if ref, _, _ := unstructured.NestedString(o, "status", "nodeRef", "name"); ref != "" {
			continue
		}
		f := artifacts.MachineFinding{Namespace: objs[i].GetNamespace(), Name: objs[i].GetName()}
		f.Cluster, _, _ = unstructured.NestedString(o, "spec", "clusterName")
		f.Phase, _, _ = unstructured.NestedString(o, "status", "phase")
		prov, found, _ := unstructured.NestedBool(o, "status", "initialization", "infrastructureProvisioned")
		if !found { // v1beta1 contract
			prov, _, _ = unstructured.NestedBool(o, "status", "infrastructureReady")
		}
		f.InfrastructureProvisioned = prov
		conds, _, _ := unstructured.NestedSlice(o, "status", "conditions")
		byType := map[string]map[string]any{}
		for _, raw := range conds {
			if c, ok := raw.(map[string]any); ok {
				t, _ := c["type"].(string)
				byType[t] = c
			}
		}
		for _, t := range []string{"InfrastructureReady", "BootstrapConfigReady", "NodeReady", "Ready"} {
			c := byType[t]
			if c == nil || c["status"] == "True" {
				continue
			}
			if m, _ := c["message"].(string); m != "" {
				f.Message = t + ": " + firstLine(m)
				break
			}
		}
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Namespace+"/"+out[i].Name < out[j].Namespace+"/"+out[j].Name })
	return out
}
