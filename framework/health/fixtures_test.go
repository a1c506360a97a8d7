package health

import (
	"fmt"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/tkg-e2e/harness/framework/assert"
	"github.com/tkg-e2e/harness/framework/kube"
)

// The clusters of the tests are fake clients with kube.Scheme, the scheme
// kube.Connect gives the real ones; APIServices are mapped by hand because
// that scheme lacks them, as a real cluster's discovery would map them.

var apiServiceGVK = kube.APIServiceGVK

const version = "v1.33.1"

var since = metav1.NewTime(time.Date(2026, 11, 22, 16, 0, 0, 0, time.UTC))

func fakeClient(t *testing.T, funcs *interceptor.Funcs, objs ...client.Object) client.Client {
	t.Helper()
	rm := meta.NewDefaultRESTMapper(nil)
	rm.Add(apiServiceGVK, meta.RESTScopeRoot)
	b := fake.NewClientBuilder().WithScheme(kube.Scheme()).WithRESTMapper(rm).WithObjects(objs...)
	if funcs != nil {
		b = b.WithInterceptorFuncs(*funcs)
	}
	return b.Build()
}

func target(c client.Client) assert.Target {
	return assert.Target{Role: assert.Workload, Name: "wl", Namespace: "default", Cluster: &kube.Cluster{Client: c}}
}

// expectOneTwo is the usual dev plan: one control plane node, two workers.
func expectOneTwo(assert.Target) (Expectation, bool) {
	return Expectation{ControlPlaneNodes: 1, WorkerNodes: 2, KubernetesVersion: version}, true
}

func node(name string, controlPlane bool, kubelet string, conds ...corev1.NodeCondition) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	if controlPlane {
		n.Labels[ControlPlaneLabel] = ""
	}
	n.Status.NodeInfo.KubeletVersion = kubelet
	has := map[corev1.NodeConditionType]bool{}
	for _, c := range conds {
		has[c.Type] = true
		n.Status.Conditions = append(n.Status.Conditions, c)
	}
	if !has[corev1.NodeReady] {
		n.Status.Conditions = append(n.Status.Conditions, cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"))
	}
	for _, p := range pressures {
		if !has[p] {
			n.Status.Conditions = append(n.Status.Conditions, cond(p, corev1.ConditionFalse, "", ""))
		}
	}
	return n
}

func cond(t corev1.NodeConditionType, s corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
	return corev1.NodeCondition{Type: t, Status: s, Reason: reason, Message: msg, LastTransitionTime: since}
}

// kubeletStopped is what the node lifecycle controller sets once a kubelet
// stops posting status.
var kubeletStopped = cond(corev1.NodeReady, corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status.")

func healthyNodes() []client.Object {
	return []client.Object{
		node("wl-cp-abcde", true, "v1.33.1+vmware.1"),
		node("wl-md-0-xyz1", false, "v1.33.1+vmware.1"),
		node("wl-md-0-xyz2", false, "v1.33.1+vmware.1"),
	}
}

// newAPIService is an APIService; service "" is a local one (served by the
// kube-apiserver itself).
func newAPIService(name, service, status, reason, msg string) client.Object {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(apiServiceGVK)
	u.SetName(name)
	if service != "" {
		_ = unstructured.SetNestedMap(u.Object, map[string]any{"namespace": "kube-system", "name": service, "port": int64(443)}, "spec", "service")
	}
	_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"type": "Available", "status": status, "reason": reason,
		"message": msg, "lastTransitionTime": "2026-11-22T16:00:00Z"}}, "status", "conditions")
	return u
}

func healthyAPIServices() []client.Object {
	return []client.Object{
		newAPIService("v1.", "", "True", "Local", "Local APIServices are always available"),
		newAPIService("v1.apps", "", "True", "Local", "Local APIServices are always available"),
		newAPIService("v1beta1.metrics.k8s.io", "metrics-server", "True", "Passed", "all checks passed"),
	}
}

func validating(name, ns, svc string, policy admissionv1.FailurePolicyType) client.Object {
	none := admissionv1.SideEffectClassNone // v1 requires sideEffects
	return &admissionv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionv1.ValidatingWebhook{{Name: "v." + name + ".example.com", FailurePolicy: &policy, SideEffects: &none,
			ClientConfig: admissionv1.WebhookClientConfig{Service: &admissionv1.ServiceReference{Namespace: ns, Name: svc}}}}}
}

func mutatingURL(name, url string) client.Object {
	return &admissionv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionv1.MutatingWebhook{{Name: "m." + name + ".example.com", ClientConfig: admissionv1.WebhookClientConfig{URL: &url}}}}
}

func service(ns, name string) client.Object {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

// slice is an EndpointSlice of a Service with one endpoint per ready value.
func slice(ns, svc string, ready ...bool) client.Object {
	s := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: svc + "-abc",
		Labels: map[string]string{discoveryv1.LabelServiceName: svc}}, AddressType: discoveryv1.AddressTypeIPv4}
	for _, r := range ready {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: &r}})
	}
	return s
}

func healthyWebhooks() []client.Object {
	return []client.Object{
		validating("capi-webhooks", "capi-system", "capi-webhook-service", admissionv1.Fail),
		service("capi-system", "capi-webhook-service"), slice("capi-system", "capi-webhook-service", true),
		mutatingURL("external", "https://hooks.example.com/mutate"),
	}
}

// cluster is a healthy cluster with the given objects added or, by name,
// replacing the healthy ones.
func cluster(t *testing.T, funcs *interceptor.Funcs, objs ...client.Object) client.Client {
	t.Helper()
	all := append(append(healthyNodes(), healthyAPIServices()...), healthyWebhooks()...)
	byKey := map[string]int{}
	for i, o := range all {
		byKey[key(o)] = i
	}
	for _, o := range objs {
		if i, ok := byKey[key(o)]; ok {
			all[i] = o
		} else {
			all = append(all, o)
		}
	}
	return fakeClient(t, funcs, all...)
}

// key tells objects apart by Go type, which is enough here: the only
// unstructured objects are APIServices.
func key(o client.Object) string {
	return fmt.Sprintf("%T/%s/%s", o, o.GetNamespace(), o.GetName())
}
