package health

import (
	"context"
	"fmt"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/assert"
)

// webhook is one webhook of a Validating- or MutatingWebhookConfiguration,
// with what its dry-run probe needs to make a request it matches.
type webhook struct {
	kind, config, name string
	client             admissionv1.WebhookClientConfig
	policy             *admissionv1.FailurePolicyType
	rules              []admissionv1.RuleWithOperations
	// matchPolicy Equivalent (the default) also matches a request for the
	// same resource through another version.
	matchPolicy                       *admissionv1.MatchPolicyType
	namespaceSelector, objectSelector *metav1.LabelSelector
	// sideEffects other than None and NoneOnDryRun make the API server
	// refuse dry-run requests the webhook matches, instead of calling it.
	sideEffects    *admissionv1.SideEffectClass
	timeoutSeconds *int32
	// matchConditions are CEL: the harness does not evaluate them.
	matchConditions []admissionv1.MatchCondition
}

func validatingHook(cfg string, w *admissionv1.ValidatingWebhook) webhook {
	return webhook{kind: "ValidatingWebhookConfiguration", config: cfg, name: w.Name, client: w.ClientConfig, policy: w.FailurePolicy,
		rules: w.Rules, matchPolicy: w.MatchPolicy, namespaceSelector: w.NamespaceSelector, objectSelector: w.ObjectSelector,
		sideEffects: w.SideEffects, timeoutSeconds: w.TimeoutSeconds, matchConditions: w.MatchConditions}
}

func mutatingHook(cfg string, w *admissionv1.MutatingWebhook) webhook {
	return webhook{kind: "MutatingWebhookConfiguration", config: cfg, name: w.Name, client: w.ClientConfig, policy: w.FailurePolicy,
		rules: w.Rules, matchPolicy: w.MatchPolicy, namespaceSelector: w.NamespaceSelector, objectSelector: w.ObjectSelector,
		sideEffects: w.SideEffects, timeoutSeconds: w.TimeoutSeconds, matchConditions: w.MatchConditions}
}

// title names the webhook as its row does, with what it calls: the start
// of every cause line about it.
func (h *webhook) title() string {
	return fmt.Sprintf("webhook %s (%s %s, %s)", h.name, h.kind, h.config, h.calls())
}

func (h *webhook) mutating() bool { return h.kind == "MutatingWebhookConfiguration" }

func (h *webhook) calls() string {
	if s := h.client.Service; s != nil {
		return fmt.Sprintf("Service %s/%s", s.Namespace, s.Name)
	}
	return "URL " + assert.Or(deref(h.client.URL), "–")
}

// webhookRows are one row per admission webhook, validating first. A
// webhook whose Service has no ready endpoint makes the API server fail (or,
// with failurePolicy Ignore, skip) every request it matches: the cause of
// "failed calling webhook" errors far from the webhook's own component. A
// ready endpoint is not enough (wrong certificate, a server that hangs), so
// the webhooks that pass that are then asked for real (a.probe).
func webhookRows(ctx context.Context, c client.Client, r *Report, a *admission) ([]assert.Row, error) {
	var hooks []webhook
	var vs admissionv1.ValidatingWebhookConfigurationList
	if err := c.List(ctx, &vs); err != nil {
		row, err := readError("validating webhooks", "ValidatingWebhookConfigurations (admissionregistration.k8s.io/v1)", err)
		return []assert.Row{row}, err
	}
	var ms admissionv1.MutatingWebhookConfigurationList
	if err := c.List(ctx, &ms); err != nil {
		row, err := readError("mutating webhooks", "MutatingWebhookConfigurations (admissionregistration.k8s.io/v1)", err)
		return []assert.Row{row}, err
	}
	for _, cfg := range vs.Items {
		for i := range cfg.Webhooks {
			hooks = append(hooks, validatingHook(cfg.Name, &cfg.Webhooks[i]))
		}
	}
	for _, cfg := range ms.Items {
		for i := range cfg.Webhooks {
			hooks = append(hooks, mutatingHook(cfg.Name, &cfg.Webhooks[i]))
		}
	}
	r.Webhooks = len(hooks)
	if len(hooks) == 0 {
		return []assert.Row{{Name: "admission webhooks", Verdict: assert.OK, Detail: "none configured"}}, nil
	}
	// Webhooks of one component share a Service: look each up once.
	seen := map[string]serviceState{}
	var rows []assert.Row
	// reachable are the webhooks worth a dry-run request (by index into
	// hooks and rows): failurePolicy Fail and a Service with somewhere to
	// send it. With Ignore a failed call lets the request through, so the
	// answer would not tell.
	var reachable []int
	for _, h := range hooks {
		row := assert.Row{Name: fmt.Sprintf("webhook %s (%s %s)", h.name, h.kind, h.config)}
		s := h.client.Service
		if s == nil {
			row.Verdict, row.Detail = assert.OK, fmt.Sprintf("calls URL %s (not probed)", assert.Or(deref(h.client.URL), "–"))
			rows = append(rows, row)
			continue
		}
		key := s.Namespace + "/" + s.Name
		st, ok := seen[key]
		if !ok {
			var err error
			if st, err = readService(ctx, c, s.Namespace, s.Name); err != nil {
				return nil, err
			}
			seen[key] = st
		}
		row.Verdict, row.Detail = judgeWebhook(key, policyOf(h.policy), st)
		if row.Verdict == assert.OK && policyOf(h.policy) == admissionv1.Fail {
			reachable = append(reachable, len(rows))
		}
		rows = append(rows, row)
	}
	answered, err := a.probe(ctx, c, hooks, rows, reachable)
	if err != nil {
		return nil, err
	}
	r.WebhooksAnswered = answered
	return rows, nil
}

// serviceState is what a webhook's Service offers.
type serviceState struct {
	missing      bool
	externalName string
	ready, total int
	// readErr is a lookup that polling cannot fix (forbidden), quoted in the row.
	readErr string
}

func readService(ctx context.Context, c client.Client, ns, name string) (serviceState, error) {
	var svc corev1.Service
	switch err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &svc); {
	case apierrors.IsNotFound(err):
		return serviceState{missing: true}, nil
	case err != nil:
		row, err := readError("", fmt.Sprintf("Service %s/%s", ns, name), err)
		return serviceState{readErr: row.Detail}, err
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return serviceState{externalName: svc.Spec.ExternalName}, nil
	}
	var slices discoveryv1.EndpointSliceList
	if err := c.List(ctx, &slices, client.InNamespace(ns), client.MatchingLabels{discoveryv1.LabelServiceName: name}); err != nil {
		row, err := readError("", fmt.Sprintf("EndpointSlices of Service %s/%s (discovery.k8s.io/v1)", ns, name), err)
		return serviceState{readErr: row.Detail}, err
	}
	var st serviceState
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			st.total++
			// The API defines an unset ready as ready (an unknown state
			// consumers are to treat as ready).
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				st.ready++
			}
		}
	}
	return st, nil
}

// judgeWebhook fails a webhook the API server cannot reach only when that
// fails requests (failurePolicy Fail, the default); with Ignore the
// requests pass unchecked, which is degraded but not broken.
func judgeWebhook(svc string, policy admissionv1.FailurePolicyType, st serviceState) (assert.Verdict, string) {
	tail := fmt.Sprintf("; failurePolicy %s", policy)
	broken := assert.NotReady
	if policy == admissionv1.Ignore {
		tail += ": requests it matches pass unchecked (not a failure)"
		broken = assert.Degraded
	} else {
		tail += ": the API server rejects every request it matches until a pod behind the Service is ready"
	}
	switch {
	case st.readErr != "":
		return assert.Error, st.readErr
	case st.missing:
		if broken == assert.NotReady {
			broken = assert.Missing
		}
		return broken, fmt.Sprintf("Service %s does not exist%s", svc, tail)
	case st.externalName != "":
		return assert.OK, fmt.Sprintf("Service %s is ExternalName %s (endpoints not checked)", svc, st.externalName)
	case st.ready == 0:
		return broken, fmt.Sprintf("Service %s has no ready endpoint (%d not ready)%s", svc, st.total, tail)
	}
	return assert.OK, fmt.Sprintf("Service %s: %s ready; failurePolicy %s", svc, plural(st.ready, "endpoint"), policy)
}

// policyOf applies the v1 default: an unset failurePolicy is Fail.
func policyOf(p *admissionv1.FailurePolicyType) admissionv1.FailurePolicyType {
	if p == nil {
		return admissionv1.Fail
	}
	return *p
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
