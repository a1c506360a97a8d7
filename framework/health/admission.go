package health

import (
	"context"
	"fmt"
	"sync"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/assert"
	"github.com/tkg-e2e/harness/framework/kube"
)

// A webhook's Service may have a ready endpoint while its server does not
// answer admission requests (a certificate the API server does not trust,
// a server that hangs or fails): then no request it matches is admitted,
// and health must say so. The probe asks each webhook for real, with a
// server-side dry-run create of an object it matches, which the API server
// sends through admission and then throws away.

const (
	// probeName names every object a probe creates (dry-run: nothing is
	// stored). A fixed name keeps the cause line the same from poll to poll.
	probeName = "tkg-e2e-admission-probe"
	// maxConcurrentProbes bounds the dry-run requests in flight: one poll
	// must not take a webhook timeout per webhook, nor flood the API server.
	maxConcurrentProbes = 8
	// defaultWebhookTimeout is the API's default timeoutSeconds; a probe
	// waits probeSlack longer, so the API server's own answer (naming the
	// webhook) arrives before the probe gives up.
	defaultWebhookTimeout = 10 * time.Second
	probeSlack            = 5 * time.Second
)

// discoverer lists a group's resources, for a rule that matches all of them.
// discovery.DiscoveryInterface is one.
type discoverer interface {
	ServerGroups() (*metav1.APIGroupList, error)
	ServerResourcesForGroupVersion(groupVersion string) (*metav1.APIResourceList, error)
}

// admission probes the webhooks of one target; it lives as long as the
// check's probe, so the scratch namespace is made once and reused.
type admission struct {
	// dryRun sends the probes. It has no client-side request timeout: each
	// request's context has the webhook's, which may exceed the client's.
	dryRun client.Client
	mapper meta.RESTMapper
	// disco is nil without a real cluster: a rule matching every resource
	// of a named group is then not probed.
	disco    discoverer
	readOnly bool
	// scratch is nil until a webhook's namespaceSelector matches no
	// existing namespace.
	scratch *scratchNamespace
}

func newAdmission(k *kube.Cluster, readOnly bool) (*admission, error) {
	a := &admission{dryRun: k.Client, mapper: k.Client.RESTMapper(), readOnly: readOnly}
	if k.Clientset != nil {
		a.disco = k.Clientset.Discovery()
	}
	if k.Config == nil {
		return a, nil
	}
	// kube.Connect's clients end every request after kube.RequestTimeout,
	// shorter than a webhook may take (timeoutSeconds up to 30).
	cfg := rest.CopyConfig(k.Config)
	cfg.Timeout = 0
	c, err := client.New(cfg, client.Options{Scheme: k.Client.Scheme(), Mapper: a.mapper})
	if err != nil {
		return nil, fmt.Errorf("client for the admission webhook probes: %w", err)
	}
	a.dryRun = c
	return a, nil
}

// answer is what became of a webhook's probe.
type answer int

const (
	// notProbed: no request was sent, or none could tell (outcome.msg
	// says why); a warning when outcome.warn.
	notProbed answer = iota
	// answered: the create was admitted (or found its name taken, which
	// the API server checks after admission); for a mutating webhook also
	// an object that then failed validation (outcome.msg).
	answered
	// denied: the webhook answered no; outcome.msg is its reason.
	denied
	// failed: the API server could not get an answer from the webhook.
	failed
	// refused: the request was refused before this webhook (schema
	// validation, RBAC, another webhook); outcome.msg is the API's message.
	refused
)

// outcome is one webhook's probe result.
type outcome struct {
	kind answer
	msg  string
	warn bool
	// other is the webhook whose failure a refusal quotes.
	other string
	// resource and object are what was created: "configmaps" and
	// "configmaps default/tkg-e2e-admission-probe".
	resource, object string
	// probedFor names the webhook whose probe saw this one fail, for a
	// failure attributed to it from another webhook's request.
	probedFor string
}

// request is one dry-run create.
type request struct {
	index   int
	hook    *webhook
	res     creatable
	obj     client.Object
	timeout time.Duration
	outcome outcome
}

// probe asks every reachable webhook (indices into hooks and rows) and
// rewrites its row with the answer; it returns how many answered. Its error
// is one polling may fix (a namespace list that timed out).
func (a *admission) probe(ctx context.Context, c client.Client, hooks []webhook, rows []assert.Row, reachable []int) (int, error) {
	if len(reachable) == 0 {
		return 0, nil
	}
	nss := &namespaces{}
	results := map[int]outcome{}
	var reqs []*request
	for _, i := range reachable {
		req, skip, err := a.prepare(ctx, c, &hooks[i], nss)
		switch {
		case err != nil:
			return 0, err
		case skip != nil:
			results[i] = *skip
			continue
		}
		req.index = i
		reqs = append(reqs, req)
	}
	a.send(ctx, reqs)
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	for _, req := range reqs {
		results[req.index] = req.outcome
	}
	attribute(hooks, rows, results)
	n := 0
	for i := range hooks {
		o, ok := results[i]
		if !ok {
			continue
		}
		if o.kind == answered || o.kind == denied {
			n++
		}
		rows[i] = outcomeRow(rows[i], &hooks[i], o, sharedAnswer(hooks, results, i))
	}
	return n, nil
}

// prepare builds a webhook's request, or says why there is none.
func (a *admission) prepare(ctx context.Context, c client.Client, h *webhook, nss *namespaces) (*request, *outcome, error) {
	if why := sideEffectsBlock(h.sideEffects); why != "" {
		return nil, &outcome{kind: notProbed, msg: why}, nil
	}
	res, why := a.chooseResource(h)
	if why != "" {
		return nil, &outcome{kind: notProbed, msg: why}, nil
	}
	obj, why := buildObject(h, res)
	if why != "" {
		return nil, &outcome{kind: notProbed, msg: why}, nil
	}
	if res.namespaced {
		ns, skip, err := a.namespaceFor(ctx, c, h.namespaceSelector, nss)
		if err != nil || skip != nil {
			return nil, skip, err
		}
		obj.SetNamespace(ns)
	}
	return &request{hook: h, res: res, obj: obj, timeout: probeTimeout(h)}, nil, nil
}

// sideEffectsBlock is why a webhook cannot be asked with a dry-run: the API
// server refuses such a request ("does not support dry run") without
// calling a webhook that declares side effects.
func sideEffectsBlock(s *admissionv1.SideEffectClass) string {
	switch {
	case s == nil:
		// v1 requires it; v1beta1 defaulted it to Unknown.
		return "not probed: sideEffects unset, a dry-run request would not call it"
	case *s == admissionv1.SideEffectClassNone, *s == admissionv1.SideEffectClassNoneOnDryRun:
		return ""
	}
	return fmt.Sprintf("not probed: sideEffects %s, a dry-run request would not call it", *s)
}

// probeTimeout gives the API server the webhook's own timeout to answer,
// plus the time to say that it did not.
func probeTimeout(h *webhook) time.Duration {
	if h.timeoutSeconds != nil && *h.timeoutSeconds > 0 {
		return time.Duration(*h.timeoutSeconds)*time.Second + probeSlack
	}
	return defaultWebhookTimeout + probeSlack
}

// send runs the requests, maxConcurrentProbes at once: webhooks sharing a
// Service are still asked one by one (each has its own path), but one that
// hangs costs a poll its timeout once, not once per webhook.
func (a *admission) send(ctx context.Context, reqs []*request) {
	var wg sync.WaitGroup
	slots := make(chan struct{}, maxConcurrentProbes)
	for _, req := range reqs {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			ctx, cancel := context.WithTimeout(ctx, req.timeout)
			defer cancel()
			err := a.dryRun.Create(ctx, req.obj, client.DryRunAll)
			req.outcome = classify(req.hook.name, req.hook.mutating(), err, req.timeout)
			req.outcome.resource, req.outcome.object = req.res.String(), describeObject(req.res, req.obj)
		})
	}
	wg.Wait()
}

// attribute gives a failure a refusal quotes ("failed calling webhook
// "other"") to that other webhook, unless its own probe answered or
// already failed: it is the evidence that it rejects what it matches.
func attribute(hooks []webhook, rows []assert.Row, results map[int]outcome) {
	for i := range hooks {
		o, ok := results[i]
		if !ok || o.kind != refused || o.other == "" {
			continue
		}
		j := hookNamed(hooks, o.other)
		if j < 0 || rows[j].Verdict.Failing() || policyOf(hooks[j].policy) != admissionv1.Fail {
			continue
		}
		if own, ok := results[j]; ok && own.kind != notProbed && own.kind != refused {
			continue
		}
		results[j] = outcome{kind: failed, msg: o.msg, resource: o.resource, object: o.object, probedFor: hooks[i].name}
	}
}

func hookNamed(hooks []webhook, name string) int {
	for j := range hooks {
		if hooks[j].name == name {
			return j
		}
	}
	return -1
}

// sharedAnswer names a webhook that answered through the same Service
// (namespace, name and port) as hooks[i]: proof that the server is there
// when hooks[i]'s own request never reached it.
func sharedAnswer(hooks []webhook, results map[int]outcome, i int) string {
	key := serviceKey(&hooks[i])
	if key == "" {
		return ""
	}
	for j := range hooks {
		if o, ok := results[j]; ok && j != i && (o.kind == answered || o.kind == denied) && serviceKey(&hooks[j]) == key {
			return hooks[j].name
		}
	}
	return ""
}

func serviceKey(h *webhook) string {
	s := h.client.Service
	if s == nil {
		return ""
	}
	port := int32(443) // the API's default
	if s.Port != nil {
		port = *s.Port
	}
	return fmt.Sprintf("%s/%s:%d", s.Namespace, s.Name, port)
}

// outcomeRow puts the probe's result first in the row, the endpoint check
// (the row as judgeWebhook made it) after it.
func outcomeRow(row assert.Row, h *webhook, o outcome, shared string) assert.Row {
	endpoints := row.Detail
	switch o.kind {
	case notProbed:
		if o.warn {
			row.Verdict = assert.Degraded
		}
		row.Detail = o.msg + "; " + endpoints
	case answered:
		then := ""
		if o.msg != "" {
			then = " (allowed it; the object then failed validation, as a minimal one may: " + assert.Shorten(o.msg, 160) + ")"
		}
		row.Detail = fmt.Sprintf("answered a dry-run create of %s%s%s; %s", o.resource, then, unevaluated(h), endpoints)
	case denied:
		row.Detail = fmt.Sprintf("answered a dry-run create of %s (denied: %s); %s", o.resource, assert.Shorten(o.msg, 160), endpoints)
	case failed:
		cause := failureCause(h, o)
		row.Verdict, row.Stuck = assert.NotReady, cause
		row.Detail = cause + "; failurePolicy Fail: the API server rejects every request it matches while the webhook does not answer"
		if h.client.Service != nil {
			row.Detail += " (" + endpoints + ")"
		}
	case refused:
		if shared != "" {
			row.Detail = fmt.Sprintf("not reached by its own probe (the dry-run create of %s was refused: %s), its Service answered webhook %s; %s",
				o.resource, assert.Shorten(o.msg, 160), shared, endpoints)
			break
		}
		row.Verdict = assert.Degraded
		row.Detail = fmt.Sprintf("not probed: the dry-run create of %s was refused before this webhook: %s; %s", o.resource, o.msg, endpoints)
	}
	return row
}

// failureCause is the line a failing webhook's row, and the wait that gives
// up on it, start with.
func failureCause(h *webhook, o outcome) string {
	via := ""
	if o.probedFor != "" {
		via = fmt.Sprintf(" (the probe of webhook %s)", o.probedFor)
	}
	return fmt.Sprintf("%s failed a dry-run create of %s%s: %s", h.title(), o.object, via, o.msg)
}

// unevaluated says that success may not mean the webhook was called: the
// harness cannot evaluate CEL matchConditions, which may exclude the object.
func unevaluated(h *webhook) string {
	if len(h.matchConditions) == 0 {
		return ""
	}
	names := make([]string, 0, len(h.matchConditions))
	for _, m := range h.matchConditions {
		names = append(names, m.Name)
	}
	return fmt.Sprintf(" (or its matchConditions %v, which the harness does not evaluate, excluded the object and it was not called)", names)
}

// finish deletes the scratch namespace, even after the wait's context
// ended: it must not outlive the check.
func (a *admission) finish(ctx context.Context, c client.Client) error {
	if a == nil || a.scratch == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	name := a.scratch.name
	if err := deleteNamespace(ctx, c, name); err != nil {
		return fmt.Errorf("deleting namespace %s, made to probe admission webhooks: %w (health.DeleteAdmissionLeftovers deletes it later)", name, err)
	}
	a.scratch = nil
	return nil
}
