package health

import (
	"fmt"
	"slices"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// creatable is a resource a probe creates, and how to build its object.
type creatable struct {
	gvr        schema.GroupVersionResource
	kind       string
	namespaced bool
	// build makes a minimal valid object; nil makes an unstructured one of
	// apiVersion, kind and metadata only (all that is known of a custom
	// resource: its schema may refuse it before a validating webhook).
	build func() client.Object
}

// String is the resource as kubectl names it: "configmaps", "deployments.apps".
func (r creatable) String() string { return r.gvr.GroupResource().String() }

// known are the resources the harness builds a valid object of, in the
// order it prefers them: the cheapest for the API server first.
var known = []creatable{
	{gvr: corev1.SchemeGroupVersion.WithResource("configmaps"), kind: "ConfigMap", namespaced: true,
		build: func() client.Object { return &corev1.ConfigMap{} }},
	{gvr: corev1.SchemeGroupVersion.WithResource("secrets"), kind: "Secret", namespaced: true,
		build: func() client.Object { return &corev1.Secret{} }},
	{gvr: corev1.SchemeGroupVersion.WithResource("serviceaccounts"), kind: "ServiceAccount", namespaced: true,
		build: func() client.Object { return &corev1.ServiceAccount{} }},
	{gvr: corev1.SchemeGroupVersion.WithResource("services"), kind: "Service", namespaced: true,
		build: func() client.Object {
			return &corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}
		}},
	{gvr: corev1.SchemeGroupVersion.WithResource("pods"), kind: "Pod", namespaced: true,
		build: func() client.Object { return &corev1.Pod{Spec: probePodSpec()} }},
	{gvr: appsv1.SchemeGroupVersion.WithResource("deployments"), kind: "Deployment", namespaced: true,
		build: func() client.Object {
			sel := map[string]string{"app": probeName}
			return &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: sel},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel}, Spec: probePodSpec()}}}
		}},
	{gvr: corev1.SchemeGroupVersion.WithResource("namespaces"), kind: "Namespace",
		build: func() client.Object { return &corev1.Namespace{} }},
}

// probePodSpec meets PodSecurity's restricted level, which a namespace may
// enforce before the validating webhooks see the pod. The image is never
// pulled: a dry-run schedules nothing.
func probePodSpec() corev1.PodSpec {
	return corev1.PodSpec{
		SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To(int64(65534)),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
		Containers: []corev1.Container{{Name: "probe", Image: "registry.k8s.io/pause:3.10",
			SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false),
				Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}}},
	}
}

// neverCalled are groups whose objects the API server does not send to
// webhooks (their own configuration), so a probe of them tells nothing.
var neverCalled = []string{"admissionregistration.k8s.io"}

// chooseResource picks what the webhook's probe creates from its CREATE
// rules: a known resource if any rule matches one, else the first custom
// resource the API serves. The why of no choice is for the row.
func (a *admission) chooseResource(h *webhook) (creatable, string) {
	if !slices.ContainsFunc(h.rules, createRule) {
		return creatable{}, "not probed: it is not called on CREATE"
	}
	for _, r := range known {
		if matchesCreate(h, r) {
			return r, ""
		}
	}
	return a.customResource(h)
}

func createRule(r admissionv1.RuleWithOperations) bool {
	return slices.Contains(r.Operations, admissionv1.Create) || slices.Contains(r.Operations, admissionv1.OperationAll)
}

// matchesCreate says whether a create of r reaches the webhook by its
// rules. With matchPolicy Equivalent (the default) a rule for another
// version of the resource matches too.
func matchesCreate(h *webhook, r creatable) bool {
	anyVersion := h.matchPolicy == nil || *h.matchPolicy != admissionv1.Exact
	for _, rule := range h.rules {
		if createRule(rule) && wild(rule.APIGroups, r.gvr.Group) && (anyVersion || wild(rule.APIVersions, r.gvr.Version)) &&
			ruleResource(rule.Resources, r.gvr.Resource) && scopeFits(rule.Scope, r.namespaced) {
			return true
		}
	}
	return false
}

func wild(list []string, x string) bool {
	return slices.Contains(list, "*") || slices.Contains(list, x)
}

// ruleResource matches a resource, not its subresources ("pods/status"
// is not created, so a rule for it only is skipped).
func ruleResource(list []string, res string) bool {
	return slices.Contains(list, "*") || slices.Contains(list, "*/*") || slices.Contains(list, res)
}

func scopeFits(scope *admissionv1.ScopeType, namespaced bool) bool {
	switch {
	case scope == nil || *scope == admissionv1.AllScopes:
		return true
	case *scope == admissionv1.NamespacedScope:
		return namespaced
	}
	return !namespaced
}

// customResource is the first resource of the webhook's CREATE rules the
// API serves, found by its RESTMapper (or, for "*" in a named group, by
// discovery).
func (a *admission) customResource(h *webhook) (creatable, string) {
	var first error
	for _, rule := range h.rules {
		if !createRule(rule) {
			continue
		}
		for _, g := range rule.APIGroups {
			for _, v := range rule.APIVersions {
				for _, res := range rule.Resources {
					r, err := a.resolve(g, v, res, rule.Scope)
					if err == nil {
						return r, ""
					}
					if first == nil {
						first = err
					}
				}
			}
		}
	}
	if first == nil {
		return creatable{}, "not probed: its rules match no resource a create can reach"
	}
	return creatable{}, "not probed: " + first.Error()
}

func (a *admission) resolve(g, v, res string, scope *admissionv1.ScopeType) (creatable, error) {
	if slices.Contains(neverCalled, g) {
		return creatable{}, fmt.Errorf("the API server does not call webhooks for %s", g)
	}
	if strings.Contains(res, "/") && res != "*/*" {
		return creatable{}, fmt.Errorf("subresource %s is not created", res)
	}
	if res == "*" || res == "*/*" {
		return a.anyResourceOf(g, v, scope)
	}
	gvr := schema.GroupVersionResource{Group: unwild(g), Version: unwild(v), Resource: res}
	gvk, err := a.mapper.KindFor(gvr)
	if err != nil {
		return creatable{}, fmt.Errorf("its rule's resource %s is not served: %v", gvr.GroupResource(), err)
	}
	m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return creatable{}, fmt.Errorf("its rule's resource %s is not served: %v", gvr.GroupResource(), err)
	}
	r := creatable{gvr: m.Resource, kind: gvk.Kind, namespaced: m.Scope.Name() == meta.RESTScopeNameNamespace}
	if !scopeFits(scope, r.namespaced) || slices.Contains(neverCalled, r.gvr.Group) {
		return creatable{}, fmt.Errorf("its rule for %s has scope %s", r, ptr.Deref(scope, admissionv1.AllScopes))
	}
	return r, nil
}

// unwild turns a rule's "*" into the RESTMapper's "any".
func unwild(s string) string {
	if s == "*" {
		return ""
	}
	return s
}

// anyResourceOf is the first creatable resource of a group (its preferred
// version when the rule allows any), for a rule matching all of them.
func (a *admission) anyResourceOf(g, v string, scope *admissionv1.ScopeType) (creatable, error) {
	if a.disco == nil || g == "*" {
		return creatable{}, fmt.Errorf("its rule matches every resource of group %q and the harness cannot list them", g)
	}
	if v == "*" {
		groups, err := a.disco.ServerGroups()
		if err != nil {
			return creatable{}, fmt.Errorf("discovering the versions of group %s: %v", g, err)
		}
		v = ""
		for _, sg := range groups.Groups {
			if sg.Name == g {
				v = sg.PreferredVersion.Version
			}
		}
		if v == "" {
			return creatable{}, fmt.Errorf("its rule's group %s is not served", g)
		}
	}
	gv := schema.GroupVersion{Group: g, Version: v}
	list, err := a.disco.ServerResourcesForGroupVersion(gv.String())
	if err != nil {
		return creatable{}, fmt.Errorf("discovering the resources of %s: %v", gv, err)
	}
	for _, r := range list.APIResources {
		if !strings.Contains(r.Name, "/") && slices.Contains(r.Verbs, "create") && scopeFits(scope, r.Namespaced) {
			return creatable{gvr: gv.WithResource(r.Name), kind: r.Kind, namespaced: r.Namespaced}, nil
		}
	}
	return creatable{}, fmt.Errorf("%s serves no resource its rule lets a probe create", gv)
}

// buildObject is the object of the webhook's probe, labelled to satisfy
// its objectSelector (and, for a Namespace, its namespaceSelector, which
// the API server matches against the namespace itself).
func buildObject(h *webhook, r creatable) (client.Object, string) {
	l, err := satisfy(h.objectSelector)
	if err != nil {
		return nil, fmt.Sprintf("not probed: no object matches objectSelector %s: %v", metav1.FormatLabelSelector(h.objectSelector), err)
	}
	if r.gvr.Group == "" && r.gvr.Resource == "namespaces" {
		nl, err := satisfy(h.namespaceSelector)
		merged, ok := mergeLabels(l, nl)
		if err != nil || !ok || !matchesAll([]*metav1.LabelSelector{h.objectSelector, h.namespaceSelector}, merged) {
			return nil, fmt.Sprintf("not probed: no namespace matches both objectSelector %s and namespaceSelector %s",
				metav1.FormatLabelSelector(h.objectSelector), metav1.FormatLabelSelector(h.namespaceSelector))
		}
		l = merged
	}
	var obj client.Object
	if r.build != nil {
		obj = r.build()
	} else {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(r.gvr.GroupVersion().WithKind(r.kind))
		obj = u
	}
	obj.SetName(probeName)
	if len(l) > 0 {
		obj.SetLabels(l)
	}
	return obj, ""
}

// satisfy gives labels a selector matches: its matchLabels, the first
// value of each In, "true" for each Exists; NotIn and DoesNotExist hold for
// a label left unset. An error means these labels do not match (In and
// matchLabels disagree, say).
func satisfy(sel *metav1.LabelSelector) (map[string]string, error) {
	l := map[string]string{}
	if sel == nil {
		return l, nil
	}
	for k, v := range sel.MatchLabels {
		l[k] = v
	}
	for _, e := range sel.MatchExpressions {
		if _, set := l[e.Key]; set {
			continue
		}
		switch e.Operator {
		case metav1.LabelSelectorOpIn:
			if len(e.Values) > 0 {
				l[e.Key] = e.Values[0]
			}
		case metav1.LabelSelectorOpExists:
			l[e.Key] = "true"
		}
	}
	s, err := selectorOf(sel)
	if err != nil {
		return nil, err
	}
	if !s.Matches(labels.Set(l)) {
		return nil, fmt.Errorf("labels %v do not satisfy it", l)
	}
	return l, nil
}

// selectorOf reads a webhook's selector; unset is the API's default {},
// which matches everything (LabelSelectorAsSelector makes nil match nothing).
func selectorOf(sel *metav1.LabelSelector) (labels.Selector, error) {
	if sel == nil {
		return labels.Everything(), nil
	}
	return metav1.LabelSelectorAsSelector(sel)
}

// describeObject is "configmaps default/tkg-e2e-admission-probe", or
// "namespaces tkg-e2e-admission-probe" for a cluster-scoped resource.
func describeObject(r creatable, obj client.Object) string {
	if ns := obj.GetNamespace(); ns != "" {
		return fmt.Sprintf("%s %s/%s", r, ns, obj.GetName())
	}
	return fmt.Sprintf("%s %s", r, obj.GetName())
}
