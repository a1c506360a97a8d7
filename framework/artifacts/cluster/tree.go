package cluster

import (
	"context"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/tree"
	crclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/artifacts"
	"github.com/tkg-e2e/harness/framework/kube"
)

// treeItem builds clusterctl's object tree for one Cluster (the discovery
// behind `clusterctl describe cluster`) and renders it. clusterctl's own
// printer is internal to Cluster API, so the rendering is ours: one line per
// object with its Available/Ready/UpToDate conditions, and below it every
// other condition that carries a message (a message is set when something
// is not as it should be).
func (c *collection) treeItem(cl *kube.Cluster, ns, name string) artifacts.Item {
	rel := path.Join(c.folder, "cluster-tree", artifacts.SafeName(ns)+"-"+artifacts.SafeName(name)+".txt")
	return artifacts.Item{Name: "condition tree of Cluster " + ns + "/" + name, Run: func(ctx context.Context) error {
		t, err := tree.Discovery(ctx, cl.Client, ns, name, tree.DiscoverOptions{
			ShowOtherConditions:    "all",
			ShowMachineSets:        true,
			AddTemplateVirtualNode: true,
			Echo:                   true,
		})
		if err != nil {
			return err
		}
		text := renderTree(t)
		if err := c.w.WriteFile(rel, []byte(text)); err != nil {
			return err
		}
		ready := false
		if cond := tree.GetAvailableCondition(t.GetRoot()); cond != nil {
			ready = cond.Status == metav1.ConditionTrue
		}
		c.addTree(artifacts.ConditionTree{Cluster: ns + "/" + name, Text: c.w.Redact(text), File: rel, Ready: ready})
		return nil
	}}
}

func renderTree(t *tree.ObjectTree) string {
	var b strings.Builder
	var walk func(obj crclient.Object, prefix, childPrefix string)
	walk = func(obj crclient.Object, prefix, childPrefix string) {
		b.WriteString(prefix + objectLabel(obj) + conditionSummary(obj) + "\n")
		for _, cond := range otherConditions(obj) {
			b.WriteString(childPrefix + "    · " + cond + "\n")
		}
		children := t.GetObjectsByParent(obj.GetUID())
		sort.SliceStable(children, func(i, j int) bool {
			zi, zj := tree.GetZOrder(children[i]), tree.GetZOrder(children[j])
			if zi != zj {
				return zi > zj
			}
			return objectLabel(children[i]) < objectLabel(children[j])
		})
		for i, ch := range children {
			if i == len(children)-1 {
				walk(ch, childPrefix+"└─", childPrefix+"  ")
			} else {
				walk(ch, childPrefix+"├─", childPrefix+"│ ")
			}
		}
	}
	walk(t.GetRoot(), "", "")
	return b.String()
}

func objectLabel(obj crclient.Object) string {
	if tree.IsVirtualObject(obj) {
		return obj.GetName()
	}
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	label := kind + "/" + obj.GetName()
	if meta := tree.GetMetaName(obj); meta != "" && meta != kind {
		label = meta + " - " + label
	}
	return label
}

var mainConditions = []string{clusterv1.AvailableCondition, clusterv1.ReadyCondition, clusterv1.MachineUpToDateCondition}

func conditionSummary(obj crclient.Object) string {
	var parts []string
	var msg string
	for _, c := range []*metav1.Condition{tree.GetAvailableCondition(obj), tree.GetReadyCondition(obj), tree.GetMachineUpToDateCondition(obj)} {
		if c == nil {
			continue
		}
		s := c.Type + "=" + string(c.Status)
		if c.Status != metav1.ConditionTrue && c.Reason != "" {
			s += "(" + c.Reason + ")"
			if msg == "" {
				msg = firstLine(c.Message)
			}
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return ""
	}
	out := "  " + strings.Join(parts, " ")
	if msg != "" {
		out += " — " + msg
	}
	return out
}

func otherConditions(obj crclient.Object) []string {
	var out []string
	for _, c := range tree.GetConditions(obj) {
		if c.Message == "" || slices.Contains(mainConditions, c.Type) {
			continue
		}
		out = append(out, fmt.Sprintf("%s=%s (%s): %s", c.Type, c.Status, c.Reason, firstLine(c.Message)))
	}
	sort.Strings(out)
	return out
}

// firstLine puts a message on one line. Cluster API's v1beta2 messages are
// bullet lists whose first line is only a heading ("* WorkersAvailable:"),
// so lines are joined rather than cut.
func firstLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 240 {
		s = s[:240] + " …"
	}
	return s
}
