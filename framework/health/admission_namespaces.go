package health

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// AdmissionProbeLabel (value "true") marks the scratch namespaces made to
// probe admission webhooks; DeleteAdmissionLeftovers deletes them.
const AdmissionProbeLabel = "tkg-e2e/admission-probe"

// scratchPrefix starts a scratch namespace's name; 5 random characters
// follow, so that runs on one cluster do not collide.
const scratchPrefix = "tkg-e2e-admission-"

// scratchNamespace is the one namespace the probes of a check make, for the
// webhooks whose namespaceSelector no existing namespace matches.
type scratchNamespace struct {
	name   string
	labels map[string]string
	// selectors are the namespaceSelectors it is labelled for: a label added
	// for one webhook must not make it miss another's.
	selectors []*metav1.LabelSelector
}

// namespaces are the namespaces a namespaced probe may create in, best
// first, listed at most once per poll.
type namespaces struct {
	listed bool
	items  []corev1.Namespace
	// why they could not be listed (forbidden): the rows say it.
	why string
}

func (n *namespaces) list(ctx context.Context, c client.Client) error {
	if n.listed {
		return nil
	}
	var list corev1.NamespaceList
	if err := c.List(ctx, &list); err != nil {
		row, err := readError("", "namespaces (v1)", err)
		if err != nil {
			return err
		}
		n.listed, n.why = true, row.Detail
		return nil
	}
	n.listed = true
	for _, ns := range list.Items {
		// No object can be created in a namespace being deleted.
		if ns.DeletionTimestamp == nil && ns.Status.Phase != corev1.NamespaceTerminating {
			n.items = append(n.items, ns)
		}
	}
	sort.SliceStable(n.items, func(i, j int) bool {
		ri, rj := namespaceRank(n.items[i].Name), namespaceRank(n.items[j].Name)
		if ri != rj {
			return ri < rj
		}
		return n.items[i].Name < n.items[j].Name
	})
	return nil
}

// namespaceRank prefers default, where test objects belong, and keeps
// kube-system for when nothing else matches: a webhook's request there is
// the one most likely to touch the cluster's own components.
func namespaceRank(name string) int {
	switch name {
	case metav1.NamespaceDefault:
		return 0
	case metav1.NamespaceSystem:
		return 2
	}
	return 1
}

// match is the best namespace whose labels the selector matches, or "".
func (n *namespaces) match(s labels.Selector) string {
	for _, ns := range n.items {
		if s.Matches(labels.Set(ns.Labels)) {
			return ns.Name
		}
	}
	return ""
}

func (n *namespaces) has(name string) bool {
	for _, ns := range n.items {
		if ns.Name == name {
			return true
		}
	}
	return false
}

// put adds or relabels a namespace for the rest of the poll.
func (n *namespaces) put(name string, l map[string]string) {
	for i := range n.items {
		if n.items[i].Name == name {
			n.items[i].Labels = maps.Clone(l)
			return
		}
	}
	n.items = append(n.items, corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: maps.Clone(l)}})
}

// namespaceFor is the namespace a webhook's namespaced probe creates in:
// an existing one its namespaceSelector matches, else the scratch
// namespace (unless read-only).
func (a *admission) namespaceFor(ctx context.Context, c client.Client, sel *metav1.LabelSelector, nss *namespaces) (string, *outcome, error) {
	s, err := selectorOf(sel)
	if err != nil {
		return "", &outcome{kind: notProbed, msg: fmt.Sprintf("not probed: its namespaceSelector is not valid: %v", err)}, nil
	}
	if err := nss.list(ctx, c); err != nil {
		return "", nil, err
	}
	if nss.why != "" {
		return "", &outcome{kind: notProbed, warn: true, msg: "not probed: no namespace to create in: " + nss.why}, nil
	}
	if name := nss.match(s); name != "" {
		return name, nil, nil
	}
	if a.readOnly {
		return "", &outcome{kind: notProbed, msg: "not probed: read-only and no existing namespace matches namespaceSelector " +
			metav1.FormatLabelSelector(sel)}, nil
	}
	name, why := a.scratchFor(ctx, c, sel, nss)
	if why != "" {
		return "", &outcome{kind: notProbed, warn: true, msg: "not probed: " + why}, nil
	}
	return name, nil, nil
}

// scratchFor makes the scratch namespace, or adds labels to it, so that
// sel matches it. The why of a failure is for the row: a namespace that
// cannot be made is a warning, not the webhook's failure.
func (a *admission) scratchFor(ctx context.Context, c client.Client, sel *metav1.LabelSelector, nss *namespaces) (string, string) {
	want, err := satisfy(sel)
	if err != nil {
		return "", fmt.Sprintf("no namespace matches namespaceSelector %s, and no labels can: %v", metav1.FormatLabelSelector(sel), err)
	}
	if a.scratch != nil && !nss.has(a.scratch.name) {
		// Deleted under the check (DeleteAdmissionLeftovers) or being
		// deleted: make another.
		a.scratch = nil
	}
	if a.scratch == nil {
		return a.createScratch(ctx, c, sel, want, nss)
	}
	merged, ok := mergeLabels(a.scratch.labels, want)
	if ok {
		ok = matchesAll(append(a.scratch.selectors, sel), merged)
	}
	if !ok {
		return "", fmt.Sprintf("no namespace matches namespaceSelector %s, and the labels it needs conflict with those scratch namespace %s has for other webhooks",
			metav1.FormatLabelSelector(sel), a.scratch.name)
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": merged}})
	if err == nil {
		err = c.Patch(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: a.scratch.name}}, client.RawPatch(types.MergePatchType, patch))
	}
	if err != nil {
		return "", fmt.Sprintf("labelling scratch namespace %s to match namespaceSelector %s: %v", a.scratch.name, metav1.FormatLabelSelector(sel), err)
	}
	a.scratch.labels, a.scratch.selectors = merged, append(a.scratch.selectors, sel)
	nss.put(a.scratch.name, merged)
	return a.scratch.name, ""
}

func (a *admission) createScratch(ctx context.Context, c client.Client, sel *metav1.LabelSelector, want map[string]string, nss *namespaces) (string, string) {
	l, ok := mergeLabels(want, map[string]string{AdmissionProbeLabel: "true"})
	if !ok || !matchesAll([]*metav1.LabelSelector{sel}, l) {
		return "", fmt.Sprintf("no namespace matches namespaceSelector %s, and a scratch namespace (labelled %s=true) cannot", metav1.FormatLabelSelector(sel), AdmissionProbeLabel)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: scratchPrefix + rand.String(5), Labels: l}}
	if err := c.Create(ctx, ns); err != nil {
		return "", fmt.Sprintf("no namespace matches namespaceSelector %s, and creating scratch namespace %s failed: %v", metav1.FormatLabelSelector(sel), ns.Name, err)
	}
	a.scratch = &scratchNamespace{name: ns.Name, labels: l, selectors: []*metav1.LabelSelector{sel}}
	nss.put(ns.Name, l)
	return ns.Name, ""
}

// mergeLabels is a ∪ b, false when they disagree on a key.
func mergeLabels(a, b map[string]string) (map[string]string, bool) {
	out := maps.Clone(a)
	if out == nil {
		out = map[string]string{}
	}
	for k, v := range b {
		if old, ok := out[k]; ok && old != v {
			return nil, false
		}
		out[k] = v
	}
	return out, true
}

func matchesAll(sels []*metav1.LabelSelector, l map[string]string) bool {
	for _, sel := range sels {
		s, err := selectorOf(sel)
		if err != nil || !s.Matches(labels.Set(l)) {
			return false
		}
	}
	return true
}

func deleteNamespace(ctx context.Context, c client.Client, name string) error {
	err := c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// DeleteAdmissionLeftovers deletes the scratch namespaces of webhook probes
// (labelled AdmissionProbeLabel) that an interrupted run left behind.
func DeleteAdmissionLeftovers(ctx context.Context, c client.Client) error {
	var list corev1.NamespaceList
	if err := c.List(ctx, &list, client.MatchingLabels{AdmissionProbeLabel: "true"}); err != nil {
		return fmt.Errorf("listing namespaces labelled %s=true: %w", AdmissionProbeLabel, err)
	}
	var errs []error
	for _, ns := range list.Items {
		if ns.DeletionTimestamp != nil {
			continue
		}
		if err := deleteNamespace(ctx, c, ns.Name); err != nil {
			errs = append(errs, fmt.Errorf("deleting namespace %s: %w", ns.Name, err))
		}
	}
	return errors.Join(errs...)
}
