package health

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/tkg-e2e/harness/framework/assert"
	"github.com/tkg-e2e/harness/framework/assert/asserttest"
)

// hookOpt changes one webhook of a fixture.
type hookOpt func(*admissionv1.ValidatingWebhook)

// webhookConfig is a ValidatingWebhookConfiguration named cfg with one
// webhook per name, all calling Service hooks/hook-svc (failurePolicy Fail,
// sideEffects None), changed by opts.
func webhookConfig(cfg string, names []string, opts ...hookOpt) client.Object {
	c := &admissionv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: cfg}}
	for _, n := range names {
		w := admissionv1.ValidatingWebhook{Name: n, FailurePolicy: ptr.To(admissionv1.Fail), SideEffects: ptr.To(admissionv1.SideEffectClassNone),
			ClientConfig: admissionv1.WebhookClientConfig{Service: &admissionv1.ServiceReference{Namespace: "hooks", Name: "hook-svc"}}}
		for _, o := range opts {
			o(&w)
		}
		c.Webhooks = append(c.Webhooks, w)
	}
	return c
}

func creates(groups, versions, resources []string) hookOpt {
	return func(w *admissionv1.ValidatingWebhook) {
		w.Rules = append(w.Rules, admissionv1.RuleWithOperations{Operations: []admissionv1.OperationType{admissionv1.Create},
			Rule: admissionv1.Rule{APIGroups: groups, APIVersions: versions, Resources: resources}})
	}
}

var onConfigMaps = creates([]string{""}, []string{"v1"}, []string{"configmaps"})

// hookService is the Service of webhookConfig, with a ready endpoint, and
// the default namespace, where the probes go.
func hookService() []client.Object {
	return []client.Object{service("hooks", "hook-svc"), slice("hooks", "hook-svc", true), namespace("default", nil)}
}

func namespace(name string, l map[string]string) *corev1.Namespace {
	all := map[string]string{"kubernetes.io/metadata.name": name}
	for k, v := range l {
		all[k] = v
	}
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: all}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}
}

// answers is an interceptor that answers a dry-run create by the object's
// Go type (the fake API server has no webhooks), recording what was sent.
type answers struct {
	by   map[string]error
	sent atomic.Int32
	mu   sync.Mutex
	obj  client.Object
}

// last is the object of the last request.
func (a *answers) last() client.Object {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.obj
}

func (a *answers) funcs() *interceptor.Funcs {
	return &interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		o := &client.CreateOptions{}
		o.ApplyOptions(opts)
		if len(o.DryRun) == 0 {
			return c.Create(ctx, obj, opts...) // the scratch namespace
		}
		a.sent.Add(1)
		a.mu.Lock()
		a.obj = obj
		a.mu.Unlock()
		return a.by[fmt.Sprintf("%T", obj)]
	}}
}

// observeProbe judges a cluster once with a check, returning the probe for Finish.
func observeProbe(t *testing.T, chk *Check, c client.Client) (*Report, assert.Probe) {
	t.Helper()
	p, err := chk.Plan(target(c), assert.Options{Timeout: time.Second, Redactor: nil})
	if err != nil || p == nil {
		t.Fatalf("Plan: %v, %v", p, err)
	}
	r, err := p.Observe(context.Background())
	if err != nil {
		t.Fatalf("Observe: %v", err)
	}
	return r.(*Report), p
}

func rowOf(t *testing.T, r *Report, hook, cfg string) assert.Row {
	t.Helper()
	return row(t, r, fmt.Sprintf("webhook %s (ValidatingWebhookConfiguration %s)", hook, cfg))
}

func internal(msg string) error { return apierrors.NewInternalError(errors.New(msg)) }

const timeoutMsg = `failed calling webhook "vpod.example.com": failed to call webhook: Post "https://w.ns.svc:443/validate?timeout=10s": context deadline exceeded`

func TestClassifyAnswers(t *testing.T) {
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "tkg-e2e-admission-probe",
		field.ErrorList{field.Required(field.NewPath("data"), "")})
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "tkg-e2e-admission-probe",
		errors.New(`User "e2e" cannot create resource "pods" in API group "" in the namespace "default"`))
	clientTimeout := &url.Error{Op: "Post", URL: "https://127.0.0.1:6443/api/v1/namespaces/default/pods?dryRun=All", Err: context.DeadlineExceeded}
	for _, c := range []struct {
		name  string
		err   error
		kind  answer
		msg   string // contained in outcome.msg
		other string
	}{
		{"allowed", nil, answered, "", ""},
		{"name taken after admission", apierrors.NewAlreadyExists(schema.GroupResource{Resource: "configmaps"}, "tkg-e2e-admission-probe"), answered, "", ""},
		{"timeout", internal(timeoutMsg), failed, "Internal error occurred: " + timeoutMsg, ""},
		{"connection refused", internal(`failed calling webhook "vpod.example.com": failed to call webhook: Post "https://w.ns.svc:443/validate?timeout=10s": dial tcp 10.96.14.2:443: connect: connection refused`), failed, "connection refused", ""},
		{"x509", internal(`failed calling webhook "vpod.example.com": failed to call webhook: Post "https://w.ns.svc:443/validate?timeout=10s": tls: failed to verify certificate: x509: certificate signed by unknown authority`), failed, "x509", ""},
		{"plain HTTP", internal(`failed calling webhook "vpod.example.com": failed to call webhook: Post "https://w.ns.svc:443/validate?timeout=10s": http: server gave HTTP response to HTTPS client`), failed, "HTTP response to HTTPS client", ""},
		{"EOF", internal(`failed calling webhook "vpod.example.com": failed to call webhook: Post "https://w.ns.svc:443/validate?timeout=10s": EOF`), failed, "EOF", ""},
		{"404", internal(`failed calling webhook "vpod.example.com": failed to call webhook: the server could not find the requested resource`), failed, "could not find", ""},
		{"500", internal(`failed calling webhook "vpod.example.com": failed to call webhook: an error on the server ("oops") has prevented the request from succeeding`), failed, "an error on the server", ""},
		{"bad response", internal(`failed calling webhook "vpod.example.com": received invalid webhook response: expected response.uid="1b2c", got ""`), failed, "invalid webhook response", ""},
		{"denied", apierrors.NewBadRequest(`admission webhook "vpod.example.com" denied the request: no`), denied, "no", ""},
		{"denied with a long reason", apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "tkg-e2e-admission-probe",
			errors.New(`admission webhook "vpod.example.com" denied the request: [container probe: image must come from harbor.local]`)), denied, "image must come from harbor.local", ""},
		{"denied without explanation", apierrors.NewBadRequest(`admission webhook "vpod.example.com" denied the request without explanation`), denied, "without explanation", ""},
		{"another webhook failed", internal(`failed calling webhook "mpod.other.io": failed to call webhook: Post "https://o.ns.svc:443/mutate?timeout=5s": EOF`), refused, "mpod.other.io", "mpod.other.io"},
		{"another webhook denied", apierrors.NewBadRequest(`admission webhook "vpod.other.io" denied the request: no`), refused, "vpod.other.io", ""},
		{"another webhook cannot dry-run", apierrors.NewBadRequest(`admission webhook "vpod.other.io" does not support dry run`), refused, "does not support dry run", ""},
		{"schema", invalid, refused, "is invalid", ""},
		{"RBAC", forbidden, refused, "cannot create resource", ""},
		{"no answer at all", clientTimeout, notProbed, "did not answer the dry-run create within 15s", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := classify("vpod.example.com", false, c.err, 15*time.Second)
			if o.kind != c.kind || o.other != c.other {
				t.Fatalf("classify(%v) = %+v, want kind %d other %q", c.err, o, c.kind, c.other)
			}
			asserttest.Says(t, "message", o.msg, c.msg)
			if c.kind == denied && strings.Contains(o.msg, "denied the request") {
				t.Errorf("denied reason %q repeats the API's preamble", o.msg)
			}
		})
	}
}

// fakeDiscovery serves one group version.
type fakeDiscovery struct{ list *metav1.APIResourceList }

func (f fakeDiscovery) ServerGroups() (*metav1.APIGroupList, error) {
	gv, _ := schema.ParseGroupVersion(f.list.GroupVersion)
	return &metav1.APIGroupList{Groups: []metav1.APIGroup{{Name: gv.Group,
		PreferredVersion: metav1.GroupVersionForDiscovery{GroupVersion: f.list.GroupVersion, Version: gv.Version}}}}, nil
}

func (f fakeDiscovery) ServerResourcesForGroupVersion(gv string) (*metav1.APIResourceList, error) {
	if gv != f.list.GroupVersion {
		return nil, apierrors.NewNotFound(schema.GroupResource{}, gv)
	}
	return f.list, nil
}

var clusterGVK = schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "Cluster"}

func TestChooseResourceFromRules(t *testing.T) {
	rm := meta.NewDefaultRESTMapper(nil)
	rm.Add(clusterGVK, meta.RESTScopeNamespace)
	certManager := fakeDiscovery{&metav1.APIResourceList{GroupVersion: "cert-manager.io/v1", APIResources: []metav1.APIResource{
		{Name: "certificates/status", Namespaced: true, Kind: "Certificate", Verbs: []string{"get", "patch"}},
		{Name: "certificaterequests", Namespaced: true, Kind: "CertificateRequest", Verbs: []string{"get", "list"}},
		{Name: "certificates", Namespaced: true, Kind: "Certificate", Verbs: []string{"create", "get", "list"}},
	}}}
	a := &admission{mapper: rm, disco: certManager}
	rule := func(ops []admissionv1.OperationType, groups, versions, resources []string, scope admissionv1.ScopeType) admissionv1.RuleWithOperations {
		return admissionv1.RuleWithOperations{Operations: ops, Rule: admissionv1.Rule{APIGroups: groups, APIVersions: versions, Resources: resources, Scope: &scope}}
	}
	create := []admissionv1.OperationType{admissionv1.Create}
	all := []admissionv1.OperationType{admissionv1.OperationAll}
	update := []admissionv1.OperationType{admissionv1.Update}
	any := admissionv1.AllScopes
	core, v1 := []string{""}, []string{"v1"}
	for _, c := range []struct {
		name       string
		rules      []admissionv1.RuleWithOperations
		exact      bool
		want, kind string // want is creatable.String(), or the why
		namespaced bool
	}{
		{"pods", []admissionv1.RuleWithOperations{rule(create, core, v1, []string{"pods"}, any)}, false, "pods", "Pod", true},
		{"the cheaper of two", []admissionv1.RuleWithOperations{rule(create, core, v1, []string{"pods", "configmaps"}, any)}, false, "configmaps", "ConfigMap", true},
		{"update only", []admissionv1.RuleWithOperations{rule(update, core, v1, []string{"pods"}, any)}, false, "not probed: it is not called on CREATE", "", false},
		{"wildcards", []admissionv1.RuleWithOperations{rule(all, []string{"*"}, []string{"*"}, []string{"*"}, any)}, false, "configmaps", "ConfigMap", true},
		{"all and subresources", []admissionv1.RuleWithOperations{rule(create, []string{"*"}, []string{"*"}, []string{"*/*"}, any)}, false, "configmaps", "ConfigMap", true},
		{"cluster-scoped wildcard", []admissionv1.RuleWithOperations{rule(create, []string{"*"}, []string{"*"}, []string{"*"}, admissionv1.ClusterScope)}, false, "namespaces", "Namespace", false},
		{"subresource only", []admissionv1.RuleWithOperations{rule(create, core, v1, []string{"pods/status", "pods/eviction"}, any)}, false, "not probed: subresource pods/status is not created", "", false},
		{"subresource and resource", []admissionv1.RuleWithOperations{rule(create, core, v1, []string{"pods/status", "pods"}, any)}, false, "pods", "Pod", true},
		{"deployments", []admissionv1.RuleWithOperations{rule(all, []string{"apps"}, v1, []string{"deployments"}, any)}, false, "deployments.apps", "Deployment", true},
		{"every apps resource", []admissionv1.RuleWithOperations{rule(create, []string{"apps"}, []string{"*"}, []string{"*"}, any)}, false, "deployments.apps", "Deployment", true},
		{"another version, Equivalent", []admissionv1.RuleWithOperations{rule(create, []string{"apps"}, []string{"v1beta2"}, []string{"deployments"}, any)}, false, "deployments.apps", "Deployment", true},
		{"another version, Exact", []admissionv1.RuleWithOperations{rule(create, []string{"apps"}, []string{"v1beta2"}, []string{"deployments"}, any)}, true, "not probed: its rule's resource deployments.apps is not served", "", false},
		{"namespaced only, for namespaces", []admissionv1.RuleWithOperations{rule(create, core, v1, []string{"namespaces"}, admissionv1.NamespacedScope)}, false, "not probed: its rule's resource namespaces is not served", "", false},
		{"custom resource", []admissionv1.RuleWithOperations{rule(create, []string{"cluster.x-k8s.io"}, []string{"v1beta2"}, []string{"clusters"}, any)}, false, "clusters.cluster.x-k8s.io", "Cluster", true},
		{"custom resource, any version", []admissionv1.RuleWithOperations{rule(create, []string{"cluster.x-k8s.io"}, []string{"*"}, []string{"clusters"}, any)}, false, "clusters.cluster.x-k8s.io", "Cluster", true},
		{"custom resource not served", []admissionv1.RuleWithOperations{rule(create, []string{"cluster.x-k8s.io"}, []string{"v1beta2"}, []string{"machines"}, any)}, false, "not probed: its rule's resource machines.cluster.x-k8s.io is not served", "", false},
		{"every resource of a group", []admissionv1.RuleWithOperations{rule(create, []string{"cert-manager.io"}, []string{"v1"}, []string{"*/*"}, any)}, false, "certificates.cert-manager.io", "Certificate", true},
		{"every resource of a group, any version", []admissionv1.RuleWithOperations{rule(create, []string{"cert-manager.io"}, []string{"*"}, []string{"*"}, any)}, false, "certificates.cert-manager.io", "Certificate", true},
		{"webhook configurations", []admissionv1.RuleWithOperations{rule(create, []string{"admissionregistration.k8s.io"}, v1, []string{"validatingwebhookconfigurations"}, any)}, false, "not probed: the API server does not call webhooks for admissionregistration.k8s.io", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := &webhook{rules: c.rules}
			if c.exact {
				h.matchPolicy = ptr.To(admissionv1.Exact)
			}
			r, why := a.chooseResource(h)
			if c.kind == "" {
				if !strings.HasPrefix(why, c.want) {
					t.Fatalf("chose %v (%q), want %q", r, why, c.want)
				}
				return
			}
			if why != "" || r.String() != c.want || r.kind != c.kind || r.namespaced != c.namespaced {
				t.Fatalf("chose %s %s namespaced=%v (%q), want %s %s namespaced=%v", r, r.kind, r.namespaced, why, c.want, c.kind, c.namespaced)
			}
		})
	}
	// Without discovery (the fake client) a group's "*" is not probed.
	h := &webhook{rules: []admissionv1.RuleWithOperations{rule(create, []string{"cert-manager.io"}, v1, []string{"*"}, any)}}
	if _, why := (&admission{mapper: rm}).chooseResource(h); !strings.Contains(why, "cannot list them") {
		t.Errorf("no discovery: %q", why)
	}
}

func TestSatisfySelectors(t *testing.T) {
	for _, c := range []struct {
		name string
		sel  *metav1.LabelSelector
		want map[string]string
		err  bool
	}{
		{"unset", nil, map[string]string{}, false},
		{"matchLabels", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}, map[string]string{"app": "x"}, false},
		{"expressions", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"web", "db"}},
			{Key: "managed", Operator: metav1.LabelSelectorOpExists},
			{Key: "control-plane", Operator: metav1.LabelSelectorOpDoesNotExist},
			{Key: "env", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"prod"}},
		}}, map[string]string{"tier": "web", "managed": "true"}, false},
		{"In agrees with matchLabels", &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "db"},
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"web", "db"}}}},
			map[string]string{"tier": "db"}, false},
		{"In disagrees with matchLabels", &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "cache"},
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"web"}}}}, nil, true},
		{"Exists and DoesNotExist", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "a", Operator: metav1.LabelSelectorOpExists}, {Key: "a", Operator: metav1.LabelSelectorOpDoesNotExist}}}, nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := satisfy(c.sel)
			if (err != nil) != c.err {
				t.Fatalf("satisfy: %v, %v", got, err)
			}
			if !c.err && fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("labels %v, want %v", got, c.want)
			}
		})
	}
}

func TestBuildObjectSatisfiesSelectors(t *testing.T) {
	h := &webhook{objectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"probe": "yes"}},
		namespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: metav1.LabelSelectorOpIn, Values: []string{"a"}}}}}
	obj, why := buildObject(h, known[0])
	if why != "" {
		t.Fatal(why)
	}
	if _, ok := obj.(*corev1.ConfigMap); !ok || obj.GetName() != probeName || obj.GetLabels()["probe"] != "yes" || obj.GetLabels()["team"] != "" {
		t.Errorf("configmap %T %s %v: want the objectSelector's labels only", obj, obj.GetName(), obj.GetLabels())
	}
	// A Namespace is matched by both selectors.
	obj, why = buildObject(h, known[len(known)-1])
	if why != "" || obj.GetLabels()["probe"] != "yes" || obj.GetLabels()["team"] != "a" || obj.GetNamespace() != "" {
		t.Errorf("namespace %v (%q): want both selectors' labels", obj.GetLabels(), why)
	}
	// A custom resource is apiVersion, kind and metadata.
	obj, _ = buildObject(&webhook{}, creatable{gvr: clusterGVK.GroupVersion().WithResource("clusters"), kind: "Cluster", namespaced: true})
	if gvk := obj.GetObjectKind().GroupVersionKind(); gvk != clusterGVK {
		t.Errorf("custom resource %v, want %v", gvk, clusterGVK)
	}
	// A Pod passes PodSecurity restricted, which runs before validating webhooks.
	pod := known[4].build().(*corev1.Pod)
	if sc := pod.Spec.Containers[0].SecurityContext; pod.Spec.SecurityContext.RunAsNonRoot == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("pod not restricted: %+v", pod.Spec)
	}
}

func TestUnansweredWebhookFailsWithItsCauseAsStuck(t *testing.T) {
	ans := &answers{by: map[string]error{"*v1.ConfigMap": internal(strings.ReplaceAll(timeoutMsg, "vpod.example.com", "vcm.example.com"))}}
	c := cluster(t, ans.funcs(), append(hookService(), webhookConfig("cm-hooks", []string{"vcm.example.com"}, onConfigMaps))...)
	r := observe(t, c)
	got := rowOf(t, r, "vcm.example.com", "cm-hooks")
	if got.Verdict != assert.NotReady || !r.Failed() {
		t.Fatalf("row %+v, want not ready, failing", got)
	}
	cause := `webhook vcm.example.com (ValidatingWebhookConfiguration cm-hooks, Service hooks/hook-svc) failed a dry-run create of configmaps default/tkg-e2e-admission-probe: Internal error occurred: failed calling webhook "vcm.example.com": failed to call webhook: Post "https://w.ns.svc:443/validate?timeout=10s": context deadline exceeded`
	if !strings.HasPrefix(got.Detail, cause+"; ") || got.Stuck != cause {
		t.Errorf("row\n  detail %s\n  stuck  %s\nwant both to start with\n  %s", got.Detail, got.Stuck, cause)
	}
	asserttest.Says(t, "detail", got.Detail, "failurePolicy Fail", "Service hooks/hook-svc: 1 endpoint ready")
	if assert.StuckCause(r.Rows()) != cause {
		t.Errorf("StuckCause %q", assert.StuckCause(r.Rows()))
	}
	// The engine gives up after the grace, with the cause first.
	_, err := assert.CheckTarget(context.Background(), NewCheck(expectOneTwo), target(c),
		assert.Options{Timeout: time.Minute, Interval: 10 * time.Millisecond, Grace: 50 * time.Millisecond})
	if err == nil || !strings.HasPrefix(err.Error(), cause) {
		t.Fatalf("CheckTarget: %v", err)
	}
}

func TestAnsweringWebhooksPass(t *testing.T) {
	for _, c := range []struct {
		name, detail string
		err          error
	}{
		{"allowed", "answered a dry-run create of configmaps; Service hooks/hook-svc: 1 endpoint ready; failurePolicy Fail", nil},
		{"denied", "answered a dry-run create of configmaps (denied: configmaps need an owner label); Service hooks/hook-svc",
			apierrors.NewBadRequest(`admission webhook "vcm.example.com" denied the request: configmaps need an owner label`)},
	} {
		t.Run(c.name, func(t *testing.T) {
			ans := &answers{by: map[string]error{"*v1.ConfigMap": c.err}}
			r := observe(t, cluster(t, ans.funcs(), append(hookService(), webhookConfig("cm-hooks", []string{"vcm.example.com"}, onConfigMaps))...))
			got := rowOf(t, r, "vcm.example.com", "cm-hooks")
			if got.Verdict != assert.OK || got.Stuck != "" || r.Failed() {
				t.Fatalf("row %+v", got)
			}
			asserttest.Says(t, "detail", got.Detail, c.detail)
			asserttest.Says(t, "summary", r.Summary(), "(1 answered a dry-run request)")
			if ans.sent.Load() != 1 {
				t.Errorf("%d requests, want 1", ans.sent.Load())
			}
		})
	}
}

// A request refused before the webhook says nothing about it: a warning,
// unless another webhook of its Service answered.
func TestRefusedBeforeTheWebhook(t *testing.T) {
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "Secret"}, probeName, field.ErrorList{field.Invalid(field.NewPath("type"), "", "bad")})
	ans := &answers{by: map[string]error{"*v1.Secret": invalid}}
	onSecrets := creates([]string{""}, []string{"v1"}, []string{"secrets"})
	alone := webhookConfig("secret-hooks", []string{"vsecret.example.com"}, onSecrets)
	r := observe(t, cluster(t, ans.funcs(), append(hookService(), alone)...))
	got := rowOf(t, r, "vsecret.example.com", "secret-hooks")
	if got.Verdict != assert.Degraded || r.Failed() || got.Stuck != "" {
		t.Fatalf("row %+v, want a warning", got)
	}
	asserttest.Says(t, "detail", got.Detail, "not probed: the dry-run create of secrets was refused before this webhook: Secret \"tkg-e2e-admission-probe\" is invalid")

	shared := webhookConfig("both", []string{"vcm.example.com"}, onConfigMaps)
	r = observe(t, cluster(t, ans.funcs(), append(hookService(), alone, shared)...))
	got = rowOf(t, r, "vsecret.example.com", "secret-hooks")
	if got.Verdict != assert.OK {
		t.Fatalf("row %+v, want ok", got)
	}
	asserttest.Says(t, "detail", got.Detail, "not reached by its own probe (the dry-run create of secrets was refused: Secret", "its Service answered webhook vcm.example.com")
}

// "failed calling webhook "other"" in one webhook's probe is the other's
// failure.
func TestAnotherWebhooksFailureIsItsOwn(t *testing.T) {
	otherFailed := internal(`failed calling webhook "vpod.example.com": failed to call webhook: Post "https://pods.hooks.svc:443/validate?timeout=10s": EOF`)
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, probeName, errors.New(`User "e2e" cannot create resource "pods"`))
	ans := &answers{by: map[string]error{"*v1.ConfigMap": otherFailed, "*v1.Pod": forbidden}}
	c := cluster(t, ans.funcs(), append(hookService(),
		webhookConfig("cm-hooks", []string{"vcm.example.com"}, onConfigMaps),
		webhookConfig("pod-hooks", []string{"vpod.example.com"}, creates([]string{""}, []string{"v1"}, []string{"pods"})))...)
	r := observe(t, c)
	pod := rowOf(t, r, "vpod.example.com", "pod-hooks")
	want := `webhook vpod.example.com (ValidatingWebhookConfiguration pod-hooks, Service hooks/hook-svc) failed a dry-run create of configmaps default/tkg-e2e-admission-probe (the probe of webhook vcm.example.com): Internal error occurred: failed calling webhook "vpod.example.com"`
	if pod.Verdict != assert.NotReady || !strings.HasPrefix(pod.Stuck, want) {
		t.Errorf("pod webhook row %+v, want it failed, stuck on\n%s", pod, want)
	}
	cm := rowOf(t, r, "vcm.example.com", "cm-hooks")
	if cm.Verdict.Failing() || cm.Stuck != "" {
		t.Errorf("configmap webhook row %+v: its request never reached it", cm)
	}
}

func TestSideEffectsRule(t *testing.T) {
	for _, c := range []struct {
		side   admissionv1.SideEffectClass
		probed bool
	}{{admissionv1.SideEffectClassNone, true}, {admissionv1.SideEffectClassNoneOnDryRun, true},
		{admissionv1.SideEffectClassSome, false}, {admissionv1.SideEffectClassUnknown, false}} {
		t.Run(string(c.side), func(t *testing.T) {
			ans := &answers{}
			r := observe(t, cluster(t, ans.funcs(), append(hookService(), webhookConfig("cm-hooks", []string{"vcm.example.com"}, onConfigMaps,
				func(w *admissionv1.ValidatingWebhook) { w.SideEffects = ptr.To(c.side) }))...))
			got := rowOf(t, r, "vcm.example.com", "cm-hooks")
			if got.Verdict != assert.OK || (ans.sent.Load() == 1) != c.probed {
				t.Fatalf("row %+v, %d requests", got, ans.sent.Load())
			}
			if !c.probed {
				asserttest.Says(t, "detail", got.Detail, "not probed: sideEffects "+string(c.side)+", a dry-run request would not call it")
			}
		})
	}
}

// A webhook the endpoint check already fails, or one with failurePolicy
// Ignore, is not asked.
func TestOnlyReachableFailWebhooksAreProbed(t *testing.T) {
	ans := &answers{}
	ignore := webhookConfig("opt", []string{"vopt.example.com"}, onConfigMaps, func(w *admissionv1.ValidatingWebhook) { w.FailurePolicy = ptr.To(admissionv1.Ignore) })
	r := observe(t, cluster(t, ans.funcs(), service("hooks", "hook-svc"), slice("hooks", "hook-svc", false), ignore,
		webhookConfig("cm-hooks", []string{"vcm.example.com"}, onConfigMaps)))
	if n := ans.sent.Load(); n != 0 {
		t.Errorf("%d requests sent", n)
	}
	got := rowOf(t, r, "vcm.example.com", "cm-hooks")
	if got.Verdict != assert.NotReady || got.Stuck != "" {
		t.Errorf("row %+v: want the endpoint row, not stuck (a pod may still get ready)", got)
	}
	asserttest.Says(t, "detail", got.Detail, "has no ready endpoint")
}

func TestMatchConditionsAreNotEvaluated(t *testing.T) {
	ans := &answers{}
	r := observe(t, cluster(t, ans.funcs(), append(hookService(), webhookConfig("cm-hooks", []string{"vcm.example.com"}, onConfigMaps,
		func(w *admissionv1.ValidatingWebhook) {
			w.MatchConditions = []admissionv1.MatchCondition{{Name: "not-kube-system", Expression: "request.namespace != 'kube-system'"}}
		}))...))
	asserttest.Says(t, "detail", rowOf(t, r, "vcm.example.com", "cm-hooks").Detail, "matchConditions [not-kube-system]", "it was not called")
}

func TestObjectSelectorLabelsTheObject(t *testing.T) {
	ans := &answers{}
	observe(t, cluster(t, ans.funcs(), append(hookService(), webhookConfig("cm-hooks", []string{"vcm.example.com"}, onConfigMaps,
		func(w *admissionv1.ValidatingWebhook) {
			w.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"policy": "on"}}
		}))...))
	obj := ans.last()
	if obj.GetLabels()["policy"] != "on" || obj.GetNamespace() != "default" {
		t.Errorf("sent %s/%s %v", obj.GetNamespace(), obj.GetName(), obj.GetLabels())
	}
}

func TestNamespacePreference(t *testing.T) {
	notDefault := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"default"}}}}
	for _, c := range []struct {
		name string
		sel  *metav1.LabelSelector
		nss  []string
		want string
	}{
		{"default first", nil, []string{"kube-system", "apps", "default"}, "default"},
		{"never kube-system while another matches", notDefault, []string{"kube-system", "default", "zeta", "apps"}, "apps"},
		{"kube-system when nothing else matches", notDefault, []string{"kube-system", "default"}, "kube-system"},
	} {
		t.Run(c.name, func(t *testing.T) {
			objs := []client.Object{service("hooks", "hook-svc"), slice("hooks", "hook-svc", true)}
			for _, n := range c.nss {
				objs = append(objs, namespace(n, nil))
			}
			ans := &answers{}
			observe(t, cluster(t, ans.funcs(), append(objs, webhookConfig("cm-hooks", []string{"vcm.example.com"}, onConfigMaps,
				func(w *admissionv1.ValidatingWebhook) { w.NamespaceSelector = c.sel }))...))
			if got := ans.last().GetNamespace(); got != c.want {
				t.Errorf("created in %q, want %q", got, c.want)
			}
		})
	}
}

var faultSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"tkg-e2e-fault": "webhook"}}

func faultHook(w *admissionv1.ValidatingWebhook) { w.NamespaceSelector = faultSelector }

func TestReadOnlyWithoutMatchingNamespaceIsNotProbed(t *testing.T) {
	ans := &answers{}
	c := cluster(t, ans.funcs(), append(hookService(),
		webhookConfig("cm-hooks", []string{"vcm.example.com"}, onConfigMaps, faultHook))...)
	r, _ := observeProbe(t, &Check{Expect: expectOneTwo, ReadOnly: true}, c)
	got := rowOf(t, r, "vcm.example.com", "cm-hooks")
	if got.Verdict != assert.OK || ans.sent.Load() != 0 {
		t.Fatalf("row %+v, %d requests", got, ans.sent.Load())
	}
	asserttest.Says(t, "detail", got.Detail, "not probed: read-only and no existing namespace matches namespaceSelector tkg-e2e-fault=webhook")
	var list corev1.NamespaceList
	if err := c.List(context.Background(), &list); err != nil || len(list.Items) != 1 {
		t.Errorf("namespaces %v, %v: a read-only check created one", list.Items, err)
	}
}

func TestScratchNamespaceIsMadeOnceAndDeleted(t *testing.T) {
	ans := &answers{}
	objs := append(hookService(),
		webhookConfig("cm-hooks", []string{"vcm.example.com", "vcm2.example.com"}, onConfigMaps, faultHook),
		webhookConfig("other", []string{"vother.example.com"}, onConfigMaps, func(w *admissionv1.ValidatingWebhook) {
			w.NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}}}}
		}))
	c := cluster(t, ans.funcs(), objs...)
	ctx := context.Background()
	scratch := func() []corev1.Namespace {
		var list corev1.NamespaceList
		if err := c.List(ctx, &list, client.MatchingLabels{AdmissionProbeLabel: "true"}); err != nil {
			t.Fatal(err)
		}
		return list.Items
	}
	chk := NewCheck(expectOneTwo)
	p, err := chk.Plan(target(c), assert.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		r, err := p.Observe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		asserttest.Says(t, "detail", rowOf(t, r.(*Report), "vother.example.com", "other").Detail, "answered a dry-run create of configmaps")
	}
	made := scratch()
	if len(made) != 1 || !strings.HasPrefix(made[0].Name, scratchPrefix) || len(made[0].Name) != len(scratchPrefix)+5 {
		t.Fatalf("scratch namespaces %v, want one", made)
	}
	if l := made[0].Labels; l["tkg-e2e-fault"] != "webhook" || l["team"] != "a" {
		t.Errorf("scratch namespace labels %v satisfy not both selectors", l)
	}
	if ns := ans.last().GetNamespace(); ns != made[0].Name {
		t.Errorf("probe created in %q", ns)
	}
	if err := p.Finish(ctx, nil, true); err != nil {
		t.Fatal(err)
	}
	if left := scratch(); len(left) != 0 {
		t.Errorf("Finish left %v", left)
	}
}

func TestDeleteAdmissionLeftovers(t *testing.T) {
	c := fakeClient(t, nil, namespace("default", nil), namespace("tkg-e2e-admission-ab1cd", map[string]string{AdmissionProbeLabel: "true"}),
		namespace("tkg-e2e-admission-zz9zz", map[string]string{AdmissionProbeLabel: "true"}))
	if err := DeleteAdmissionLeftovers(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	var list corev1.NamespaceList
	if err := c.List(context.Background(), &list); err != nil || len(list.Items) != 1 || list.Items[0].Name != "default" {
		t.Errorf("left %v (%v)", list.Items, err)
	}
}

// Webhooks that hang cost one poll their timeout once, not once each, and
// each request is bounded by its webhook's timeoutSeconds + 5 s.
func TestProbesRunConcurrentlyWithTheWebhooksTimeout(t *testing.T) {
	var deadlines []time.Duration
	var mu sync.Mutex
	funcs := &interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		d, _ := ctx.Deadline()
		mu.Lock()
		deadlines = append(deadlines, time.Until(d))
		mu.Unlock()
		time.Sleep(200 * time.Millisecond)
		return nil
	}}
	names := make([]string, 16)
	for i := range names {
		names[i] = fmt.Sprintf("v%d.example.com", i)
	}
	c := cluster(t, funcs, append(hookService(), webhookConfig("many", names, onConfigMaps,
		func(w *admissionv1.ValidatingWebhook) { w.TimeoutSeconds = ptr.To(int32(3)) }))...)
	start := time.Now()
	r := observe(t, c)
	if took := time.Since(start); took > 1500*time.Millisecond {
		t.Errorf("16 webhooks of 200 ms took %s: not concurrent", took)
	}
	if r.WebhooksAnswered != 16 || len(deadlines) != 16 {
		t.Fatalf("%d answered, %d requests", r.WebhooksAnswered, len(deadlines))
	}
	for _, d := range deadlines {
		if d > 8*time.Second || d < 7*time.Second {
			t.Errorf("request deadline %s, want 3 s + 5 s", d)
		}
	}
}

// The API server validates an object after the mutating webhooks and
// before the validating ones: Invalid is an answer from the first, and
// says nothing of the second.
func TestClassifyInvalidByPhase(t *testing.T) {
	invalid := apierrors.NewInvalid(schema.GroupKind{Group: "cluster.x-k8s.io", Kind: "Cluster"}, probeName, field.ErrorList{field.Required(field.NewPath("spec"), "")})
	deniedInvalid := apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, probeName,
		field.ErrorList{field.Invalid(field.NewPath("data"), "", `admission webhook "mfirst.example.com" denied the request: no`)})
	for _, c := range []struct {
		name     string
		mutating bool
		err      error
		kind     answer
	}{
		{"mutating, object invalid", true, invalid, answered},
		{"validating, object invalid", false, invalid, refused},
		{"mutating, another webhook's denial as Invalid", true, deniedInvalid, refused},
	} {
		t.Run(c.name, func(t *testing.T) {
			if o := classify("mcluster.example.com", c.mutating, c.err, time.Second); o.kind != c.kind {
				t.Errorf("classify = %+v, want kind %d", o, c.kind)
			}
		})
	}
}

func TestMutatingWebhookAnsweredWhenTheObjectIsThenInvalid(t *testing.T) {
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, probeName, field.ErrorList{field.Required(field.NewPath("data"), "")})
	ans := &answers{by: map[string]error{"*v1.ConfigMap": invalid}}
	m := &admissionv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "defaults"}}
	v := webhookConfig("checks", []string{"vcm.example.com"}, onConfigMaps).(*admissionv1.ValidatingWebhookConfiguration)
	w := v.Webhooks[0]
	m.Webhooks = []admissionv1.MutatingWebhook{{Name: "mcm.example.com", ClientConfig: w.ClientConfig, Rules: w.Rules,
		FailurePolicy: w.FailurePolicy, SideEffects: w.SideEffects}}
	r := observe(t, cluster(t, ans.funcs(), append(hookService(), m, v)...))
	got := row(t, r, "webhook mcm.example.com (MutatingWebhookConfiguration defaults)")
	if got.Verdict != assert.OK {
		t.Fatalf("mutating row %+v", got)
	}
	asserttest.Says(t, "mutating row", got.Detail, "answered a dry-run create of configmaps (allowed it; the object then failed validation")
	asserttest.Says(t, "validating row", rowOf(t, r, "vcm.example.com", "checks").Detail,
		"not reached by its own probe", "its Service answered webhook mcm.example.com")
	if r.WebhooksAnswered != 1 {
		t.Errorf("%d answered, want 1", r.WebhooksAnswered)
	}
}
