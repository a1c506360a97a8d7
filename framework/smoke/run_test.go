package smoke

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgofake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tkg-e2e/harness/framework/assert/asserttest"
	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/redact"
)

// These tests drive Run against a fake API server, with fakeKubelet doing
// what the controllers, the scheduler and the kubelet would: start the
// servers, give the Service an IP, run the clients. What the clients print
// is made up here from the same facts; the real script is proven by
// script_test.go (busybox) and against a real cluster.

func fakeClient(objs ...client.Object) client.Client {
	return fake.NewClientBuilder().WithScheme(kube.Scheme()).WithObjects(objs...).Build()
}

func fakeCluster(objs ...client.Object) *kube.Cluster {
	return &kube.Cluster{Kubeconfig: "wl.kubeconfig", Client: fakeClient(objs...), Clientset: clientgofake.NewClientset()}
}

type fakeKubelet struct {
	c     client.Client
	nodes []corev1.Node
	// pullFails: nodes where the server image cannot be pulled.
	pullFails map[string]bool
	// dropCrossNode: requests between nodes time out (a CNI that does not route).
	dropCrossNode bool
	// secret is printed by every client, to prove the log is redacted.
	secret string

	mu   sync.Mutex
	logs map[string]string
}

func (k *fakeKubelet) start(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	k.logs = map[string]string{}
	go func() {
		for ctx.Err() == nil {
			k.step(ctx)
			time.Sleep(2 * time.Millisecond)
		}
	}()
}

func (k *fakeKubelet) log(_ context.Context, _, pod string) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.logs[pod], nil
}

func (k *fakeKubelet) step(ctx context.Context) {
	// The API server allocates a ClusterIP as it creates a Service; here
	// the servers start only once that happened, or Run could see them
	// Ready before the Service has its IP, which a real cluster never shows.
	withIP := map[string]bool{}
	svcs := corev1.ServiceList{}
	_ = k.c.List(ctx, &svcs)
	for i := range svcs.Items {
		if s := &svcs.Items[i]; s.Spec.ClusterIP == "" {
			s.Spec.ClusterIP = "10.96.0.42"
			_ = k.c.Update(ctx, s)
		}
		withIP[svcs.Items[i].Namespace] = true
	}
	deps := appsv1.DeploymentList{}
	_ = k.c.List(ctx, &deps)
	for _, d := range deps.Items {
		if !withIP[d.Namespace] {
			continue
		}
		pods := corev1.PodList{}
		_ = k.c.List(ctx, &pods, client.InNamespace(d.Namespace), client.MatchingLabels(serverLabels()))
		if len(pods.Items) > 0 {
			k.publishEndpoints(ctx, d.Namespace, pods.Items)
			continue
		}
		// The scheduler: one per node that takes the pod (for the servers,
		// an untainted one), as the anti-affinity says.
		for i, node := range k.fitting(d.Spec.Template.Spec.Tolerations)[:*d.Spec.Replicas] {
			p := readyPod("web-"+node, node, fmt.Sprintf("10.244.%d.5", i+1))
			if k.pullFails[node] {
				p = pullingPod("web-"+node, node)
			}
			p.Namespace = d.Namespace
			_ = k.c.Create(ctx, &p)
		}
	}
	clients := corev1.PodList{}
	_ = k.c.List(ctx, &clients, client.MatchingLabels{roleLabel: "client"})
	for i := range clients.Items {
		p := &clients.Items[i]
		if p.Status.Phase != "" {
			continue
		}
		node := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields[0].Values[0]
		if why := k.unfit(node, p.Spec.Tolerations); why != "" {
			// The scheduler leaves the client Pending, saying why.
			p.Status.Phase = corev1.PodPending
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
				Reason: corev1.PodReasonUnschedulable, Message: "0/1 nodes are available: " + why}}
			_ = k.c.Status().Update(ctx, p)
			continue
		}
		p.Spec.NodeName = node
		if err := k.c.Update(ctx, p); err != nil {
			continue
		}
		log, exit := k.runClient(ctx, p)
		k.mu.Lock()
		k.logs[p.Name] = log
		k.mu.Unlock()
		p.Status.Phase = corev1.PodSucceeded
		if exit != 0 {
			p.Status.Phase = corev1.PodFailed
		}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: clientContainer,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: exit, Reason: "Completed"}}}}
		// The fake client, like the API server, keeps status out of Update.
		_ = k.c.Status().Update(ctx, p)
	}
}

// publishEndpoints is the EndpointSlice controller: one slice listing the
// Ready servers, written once they are all there.
func (k *fakeKubelet) publishEndpoints(ctx context.Context, ns string, pods []corev1.Pod) {
	slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: serverName + "-abcde",
		Labels: map[string]string{discoveryv1.LabelServiceName: serverName}}, AddressType: discoveryv1.AddressTypeIPv4}
	for _, p := range pods {
		if podReady(&p) {
			slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{Addresses: []string{p.Status.PodIP},
				Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}})
		}
	}
	if err := k.c.Create(ctx, slice); apierrors.IsAlreadyExists(err) {
		_ = k.c.Update(ctx, slice)
	}
}

// unfit says why the scheduler would not put a pod with tolerations on node
// ("" if it would): the node is missing, NotReady, cordoned, or has a
// NoSchedule or NoExecute taint the pod does not tolerate. It is written
// from the API's rules, not with the package's own node filter, so that the
// tests catch a client placed where it cannot run.
func (k *fakeKubelet) unfit(node string, tolerations []corev1.Toleration) string {
	for i := range k.nodes {
		n := &k.nodes[i]
		if n.Name != node {
			continue
		}
		if n.Spec.Unschedulable {
			return "1 node(s) were unschedulable"
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue {
				return "1 node(s) were not ready"
			}
		}
		for j := range n.Spec.Taints {
			t := &n.Spec.Taints[j]
			if t.Effect == corev1.TaintEffectPreferNoSchedule {
				continue
			}
			ok := false
			for l := range tolerations {
				ok = ok || tolerations[l].ToleratesTaint(logr.Discard(), t, false)
			}
			if !ok {
				return fmt.Sprintf("1 node(s) had untolerated taint {%s}", t.ToString())
			}
		}
		return ""
	}
	return "node " + node + " not found"
}

// fitting are the names of the nodes that take a pod with tolerations, sorted.
func (k *fakeKubelet) fitting(tolerations []corev1.Toleration) []string {
	var out []string
	for i := range k.nodes {
		if k.unfit(k.nodes[i].Name, tolerations) == "" {
			out = append(out, k.nodes[i].Name)
		}
	}
	sort.Strings(out)
	return out
}

// runClient makes up what clientScript would print on the pod's node.
func (k *fakeKubelet) runClient(ctx context.Context, p *corev1.Pod) (string, int32) {
	servers := corev1.PodList{}
	_ = k.c.List(ctx, &servers, client.InNamespace(p.Namespace), client.MatchingLabels(serverLabels()))
	var backends []Backend
	var fail []string
	for _, s := range servers.Items {
		backends = append(backends, Backend{Pod: s.Name, Node: s.Spec.NodeName, IP: s.Status.PodIP})
		if k.dropCrossNode && s.Spec.NodeName != p.Spec.NodeName {
			fail = append(fail, s.Name)
		}
	}
	env := map[string]string{}
	for _, e := range p.Spec.Containers[0].Env {
		env[e.Name] = e.Value
	}
	log := "token: " + k.secret + "\n" + scriptLog(p.Spec.NodeName, env["SMOKE_SERVICE_HOST"], "10.96.0.42", backends, fail...)
	if len(fail) > 0 {
		return log, 1
	}
	return log, 0
}

func runFake(t *testing.T, k *fakeKubelet, in Input) (*Result, error) {
	t.Helper()
	objs := make([]client.Object, 0, len(k.nodes))
	for i := range k.nodes {
		objs = append(objs, &k.nodes[i])
	}
	in.Cluster = fakeCluster(objs...)
	k.c = in.Cluster.Client
	if in.Image == "" {
		in.Image = "busybox:1.35.0"
	}
	if in.Timeout == 0 {
		in.Timeout, in.Poll = 3*time.Second, 5*time.Millisecond
	}
	if err := in.validate(); err != nil {
		t.Fatal(err)
	}
	in.defaults()
	k.start(t)
	r := &runner{in: in, logs: k.log}
	res, err := r.run(context.Background())
	if res == nil {
		t.Fatalf("Run returned no result (err %v)", err)
	}
	nss := corev1.NamespaceList{}
	if lerr := in.Cluster.Client.List(context.Background(), &nss, client.MatchingLabels{LabelKey: LabelValue}); lerr != nil || len(nss.Items) != 0 {
		t.Errorf("smoke namespaces left behind: %v %v", nss.Items, lerr)
	}
	return res, err
}

// TestRunProvesACAPDShapedCluster: CAPD's default, a control plane tainted
// NoSchedule and one worker. The server runs on the worker, a client on
// each node; the control plane's client reaching the worker's server is
// the traffic across nodes, so everything is proven (RequireCrossNode too).
func TestRunProvesACAPDShapedCluster(t *testing.T) {
	k := &fakeKubelet{nodes: []corev1.Node{readyNode("wl-cp", controlPlaneTaint), readyNode("wl-md-0")}}
	var progress bytes.Buffer
	res, err := runFake(t, k, Input{Progress: &progress, RequireCrossNode: true})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, res.Markdown())
	}
	if !res.Passed() || !res.Proven() || len(res.Backends) != 1 || len(res.Clients) != 2 || len(res.Requests) != 4 || len(res.DNS) != 2 {
		t.Fatalf("result: %+v\n%s", res, res.Markdown())
	}
	if b := res.Backends[0]; b.Pod != "web-wl-md-0" || b.Node != "wl-md-0" {
		t.Errorf("server %+v, want web-wl-md-0 on the worker", b)
	}
	if got := strings.Join(res.ClientNodes, ","); got != "wl-cp,wl-md-0" {
		t.Errorf("client nodes = %s, want wl-cp,wl-md-0", got)
	}
	for i, want := range []string{"wl-cp", "wl-md-0"} {
		if c := res.Clients[i]; c.Node != want || c.Phase != string(corev1.PodSucceeded) {
			t.Errorf("client %d: %+v, want Succeeded on %s", i, c, want)
		}
		if d := res.DNS[i]; d.From != want || !d.OK {
			t.Errorf("DNS %d: %+v, want ok from %s", i, d, want)
		}
	}
	for _, q := range res.Requests {
		if !q.OK || q.ToNode != "wl-md-0" || q.CrossNode() != (q.From == "wl-cp") {
			t.Errorf("request %+v: want answered on wl-md-0, across nodes from wl-cp only", q)
		}
	}
	last := res.Proofs[len(res.Proofs)-1]
	if last.Claim != ClaimCrossNode || last.Status != Proven || last.Detail != "wl-cp → web-wl-md-0 on wl-md-0 via service (and 1 more)" {
		t.Errorf("cross-node proof %+v", last)
	}
	if !strings.HasPrefix(res.Namespace, NamePrefix) || len(res.Namespace) != len(NamePrefix)+5 ||
		res.ServiceHost != "web."+res.Namespace+".svc.cluster.local" || res.ServiceIP != "10.96.0.42" {
		t.Errorf("namespace %q, service %q → %q", res.Namespace, res.ServiceHost, res.ServiceIP)
	}
	var steps []string
	for _, s := range res.Steps {
		steps = append(steps, s.Name)
	}
	if got := strings.Join(steps, ","); got != "nodes,namespace,servers,clients,cleanup" {
		t.Errorf("steps = %s", got)
	}
	asserttest.Says(t, "progress", progress.String(),
		"[smoke] schedulable nodes: wl-md-0 (left out: wl-cp: taint node-role.kubernetes.io/control-plane:NoSchedule); clients on wl-cp, wl-md-0",
		"servers Ready: web-wl-md-0 on wl-md-0", "client on wl-cp: DNS ok, 2/2 requests ok", "client on wl-md-0: DNS ok, 2/2 requests ok",
		"namespace "+res.Namespace+" deleted")
	md := res.Markdown()
	asserttest.Says(t, "markdown", md, "## Smoke test of cluster wl.kubeconfig: PASSED\n", "Clients on: wl-cp, wl-md-0",
		"| pod traffic crosses from one node to another | ✓ proven | wl-cp → web-wl-md-0 on wl-md-0 via service (and 1 more) |",
		"| wl-cp | pod IP | http://10.244.1.5:8080/ | web-wl-md-0 on wl-md-0 | yes | ✓ ok |")
	asserttest.SaysNot(t, "markdown", md, "not possible", "not everything proven")
}

// TestRunPutsNoClientOnANotReadyOrCordonedNode: a control plane, two
// workers, one worker cordoned and one NotReady (both with the taint the
// node controller adds, which the clients tolerate): servers on the two
// good workers, clients there and on the control plane, none elsewhere.
func TestRunPutsNoClientOnANotReadyOrCordonedNode(t *testing.T) {
	cordoned := readyNode("wl-md-2", corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule})
	cordoned.Spec.Unschedulable = true
	notReady := readyNode("wl-md-3", corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule})
	notReady.Status.Conditions[0] = corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown",
		Message: "Kubelet stopped posting node status."}
	k := &fakeKubelet{nodes: []corev1.Node{readyNode("wl-cp", controlPlaneTaint), readyNode("wl-md-0"), readyNode("wl-md-1"), cordoned, notReady}}
	res, err := runFake(t, k, Input{})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, res.Markdown())
	}
	if !res.Proven() || len(res.Backends) != 2 || len(res.Clients) != 3 || len(res.Requests) != 9 || len(res.DNS) != 3 {
		t.Fatalf("result: %+v\n%s", res, res.Markdown())
	}
	if got := strings.Join(res.ClientNodes, ","); got != "wl-cp,wl-md-0,wl-md-1" {
		t.Errorf("client nodes = %s, want wl-cp,wl-md-0,wl-md-1", got)
	}
	var ran []string
	for _, c := range res.Clients {
		ran = append(ran, c.Node)
	}
	if got := strings.Join(ran, ","); got != "wl-cp,wl-md-0,wl-md-1" {
		t.Errorf("clients ran on %s", got)
	}
	asserttest.Says(t, "markdown", res.Markdown(), "Clients on: wl-cp, wl-md-0, wl-md-1\n", "| wl-md-2 | no | cordoned, taint node.kubernetes.io/unschedulable:NoSchedule |",
		"| wl-md-3 | no | NotReady (NodeStatusUnknown: Kubelet stopped posting node status.), taint node.kubernetes.io/not-ready:NoSchedule |")
}

func TestRunCreatesWhatTheBriefAsks(t *testing.T) {
	k := &fakeKubelet{nodes: []corev1.Node{readyNode("n1"), readyNode("n2")}}
	in := Input{Cluster: fakeCluster(&k.nodes[0], &k.nodes[1]), Image: "busybox:1.35.0", Timeout: time.Second, Poll: 5 * time.Millisecond}
	in.defaults()
	r := &runner{in: in, logs: k.log}
	r.res = &Result{}
	// Stop before the clients: look at the objects the way the API server has them.
	ctx := context.Background()
	if err := r.nodes(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.namespace(ctx); err != nil {
		t.Fatal(err)
	}
	ns := corev1.Namespace{}
	if err := in.Cluster.Client.Get(ctx, client.ObjectKey{Name: r.ns}, &ns); err != nil || ns.Labels[LabelKey] != LabelValue {
		t.Fatalf("namespace %v labels %v", err, ns.Labels)
	}
	for _, obj := range []client.Object{deployment(r.ns, in.Image, 2), service(r.ns)} {
		if err := in.Cluster.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	d := appsv1.Deployment{}
	if err := in.Cluster.Client.Get(ctx, client.ObjectKey{Namespace: r.ns, Name: "web"}, &d); err != nil {
		t.Fatal(err)
	}
	spec := d.Spec.Template.Spec
	c := spec.Containers[0]
	if *d.Spec.Replicas != 2 || c.Image != "busybox:1.35.0" || c.ImagePullPolicy != corev1.PullIfNotPresent ||
		c.ReadinessProbe.HTTPGet.Port.IntValue() != 8080 || !strings.Contains(c.Command[2], "httpd -f -p 8080 -h /www") {
		t.Errorf("server container: %+v", c)
	}
	anti := spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if len(anti) != 1 || anti[0].TopologyKey != corev1.LabelHostname || anti[0].LabelSelector.MatchLabels["app"] != "web" {
		t.Errorf("anti-affinity: %+v", anti)
	}
	if len(spec.Tolerations) != 0 || *spec.SecurityContext.RunAsNonRoot != true || spec.SecurityContext.SeccompProfile == nil {
		t.Errorf("pod spec: %+v", spec)
	}
	svc := corev1.Service{}
	if err := in.Cluster.Client.Get(ctx, client.ObjectKey{Namespace: r.ns, Name: "web"}, &svc); err != nil {
		t.Fatal(err)
	}
	if p := svc.Spec.Ports[0]; svc.Spec.Type != corev1.ServiceTypeClusterIP || p.Port != 80 || p.TargetPort.IntValue() != 8080 {
		t.Errorf("service: %+v", svc.Spec)
	}
	cp := clientPod(r.ns, "client-0", "n2", in.Image, "web."+r.ns+".svc.cluster.local", twoBackends, 20, 1)
	env := map[string]string{}
	for _, e := range cp.Spec.Containers[0].Env {
		env[e.Name] = e.Value
	}
	if cp.Spec.RestartPolicy != corev1.RestartPolicyNever ||
		cp.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields[0].Values[0] != "n2" ||
		env["SMOKE_BACKENDS"] != "web-a=http://10.244.1.5:8080/ web-b=http://10.244.2.7:8080/" || env["SMOKE_BUDGET_SECONDS"] != "20" {
		t.Errorf("client pod: %+v env %v", cp.Spec, env)
	}
	if u := backendURL("fd00::5"); u != "http://[fd00::5]:8080/" {
		t.Errorf("IPv6 backend URL %q", u)
	}
}

// TestRunSingleNodeClusterSaysCrossNodeWasNotPossible: with one Ready node
// in all, server and client share it; the run passes, but not everything
// is proven.
func TestRunSingleNodeClusterSaysCrossNodeWasNotPossible(t *testing.T) {
	k := &fakeKubelet{nodes: []corev1.Node{readyNode("solo")}}
	res, err := runFake(t, k, Input{})
	if err != nil || !res.Passed() || res.Proven() {
		t.Fatalf("err=%v passed=%v proven=%v", err, res.Passed(), res.Proven())
	}
	if got := strings.Join(res.ClientNodes, ","); got != "solo" || len(res.Clients) != 1 || len(res.Backends) != 1 {
		t.Fatalf("client nodes %s, clients %+v, servers %+v", got, res.Clients, res.Backends)
	}
	for _, p := range res.Proofs[:len(res.Proofs)-1] {
		if p.Status != Proven {
			t.Errorf("%s: %s (%s)", p.Claim, p.Status, p.Detail)
		}
	}
	last := res.Proofs[len(res.Proofs)-1]
	if last.Claim != ClaimCrossNode || last.Status != NotPossible {
		t.Fatalf("cross-node proof %+v", last)
	}
	asserttest.Says(t, "markdown", res.Markdown(), "PASSED, not everything proven", "– not possible",
		"not possible: clients on 1 node (solo); traffic between nodes was not tested", "Clients on: solo\n")

	_, err = runFake(t, &fakeKubelet{nodes: k.nodes}, Input{RequireCrossNode: true})
	var se *StepError
	if !errors.As(err, &se) || se.Step != StepNodes || !strings.Contains(err.Error(), "clients can run on one node only (solo; left out: none) and RequireCrossNode is set") {
		t.Fatalf("RequireCrossNode with one node: %v", err)
	}
}

// TestRunNoClientWhereANoExecuteTaintIs: the clients tolerate NoSchedule
// only, so a control plane tainted NoExecute as well gets no client, and
// one worker alone cannot show traffic between nodes.
func TestRunNoClientWhereANoExecuteTaintIs(t *testing.T) {
	cp := readyNode("cp", controlPlaneTaint, corev1.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoExecute})
	k := &fakeKubelet{nodes: []corev1.Node{cp, readyNode("md-0")}}
	res, err := runFake(t, k, Input{})
	if err != nil || !res.Passed() || res.Proven() {
		t.Fatalf("err=%v passed=%v proven=%v", err, res.Passed(), res.Proven())
	}
	if got := strings.Join(res.ClientNodes, ","); got != "md-0" || len(res.Clients) != 1 {
		t.Fatalf("client nodes %s, clients %+v", got, res.Clients)
	}
	asserttest.Says(t, "markdown", res.Markdown(), "not possible: clients on 1 node (md-0)")

	_, err = runFake(t, &fakeKubelet{nodes: k.nodes}, Input{RequireCrossNode: true})
	if err == nil || !strings.Contains(err.Error(), "clients can run on one node only (md-0; left out: cp: taint node-role.kubernetes.io/control-plane:NoExecute)") {
		t.Fatalf("RequireCrossNode with a NoExecute control plane: %v", err)
	}
}

// TestRunFakeSchedulerKeepsAClientOffATaintedNodeWithoutItsToleration
// proves the fake kubelet honours tolerations, which the tests above rely
// on: without clientTolerations the control plane's client stays Pending.
func TestRunFakeSchedulerKeepsAClientOffATaintedNodeWithoutItsToleration(t *testing.T) {
	k := &fakeKubelet{nodes: []corev1.Node{readyNode("cp", controlPlaneTaint), readyNode("md-0")}}
	if why := k.unfit("cp", nil); why != "1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane:NoSchedule}" {
		t.Errorf("unfit(cp, no tolerations) = %q", why)
	}
	if why := k.unfit("cp", clientTolerations); why != "" {
		t.Errorf("unfit(cp, clientTolerations) = %q", why)
	}
	if got := strings.Join(k.fitting(podTolerations), ","); got != "md-0" {
		t.Errorf("servers fit on %s, want md-0", got)
	}
}

func TestRunFailsNamingTheServerThatCannotStart(t *testing.T) {
	k := &fakeKubelet{nodes: []corev1.Node{readyNode("n1"), readyNode("n2")}, pullFails: map[string]bool{"n2": true}}
	// An image that cannot be pulled does not heal: the wait ends after its
	// grace, not at its timeout, and the message starts with the kubelet's words.
	start := time.Now()
	res, err := runFake(t, k, Input{Timeout: time.Minute, Poll: 10 * time.Millisecond, Grace: 100 * time.Millisecond})
	var se *StepError
	if !errors.As(err, &se) || se.Step != StepServers {
		t.Fatalf("want a StepError at %q, got %v", StepServers, err)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("took %s: a pull that cannot succeed must end the wait after the grace (100ms), not the timeout (1m)", took)
	}
	if !strings.HasPrefix(err.Error(), "ImagePullBackOff: Back-off pulling image") {
		t.Errorf("the error must start with the cause: %q", err)
	}
	asserttest.Says(t, "error", err.Error(), `(smoke test of cluster wl.kubeconfig, step "servers")`, "2 replicas Ready on distinct nodes",
		"pod tkg-e2e-smoke-", "/web-n2", "last state: web: 1/2 replicas ready (web-n1 on n1); pod web-n2 on node n2 ImagePullBackOff")
	if res.Failure == "" || res.Proofs[0].Status != Failed || res.Proofs[1].Status != NotReached {
		t.Errorf("result %+v", res.Proofs)
	}
	if s := res.Steps[len(res.Steps)-1]; s.Name != StepCleanup {
		t.Errorf("no cleanup step after a failure: %v", res.Steps)
	}
}

func TestRunFailsWhenPodsCannotReachAnotherNode(t *testing.T) {
	k := &fakeKubelet{nodes: []corev1.Node{readyNode("n1"), readyNode("n2")}, dropCrossNode: true, secret: "s3cr3t-t0ken"}
	res, err := runFake(t, k, Input{Redactor: redact.New("s3cr3t-t0ken")})
	var se *StepError
	if !errors.As(err, &se) || se.Step != StepClients {
		t.Fatalf("want a StepError at %q, got %v", StepClients, err)
	}
	asserttest.Says(t, "error", err.Error(), "2 of 2 clients found problems", "client-0 on node n1 (exit code 1 (Completed))",
		"request to web-n2 via pod IP (http://10.244.2.5:8080/): wget: download timed out", "smoke done failed=1")
	md := res.Markdown()
	asserttest.Says(t, "markdown", md, "FAILED", "| pod traffic crosses from one node to another | ✗ failed | no request crossed nodes: n1 → web-n2 on n2: wget: download timed out",
		"### Client client-0 on node n1", "```")
	asserttest.SaysNot(t, "markdown", md+err.Error(), "s3cr3t-t0ken")
}

func TestRunWithoutSchedulableNodeCreatesNothing(t *testing.T) {
	k := &fakeKubelet{nodes: []corev1.Node{readyNode("cp", controlPlaneTaint)}}
	res, err := runFake(t, k, Input{})
	if err == nil || res.Namespace != "" || len(res.Steps) != 1 {
		t.Fatalf("err=%v result=%+v", err, res)
	}
	asserttest.Says(t, "error", err.Error(), `no schedulable node among 1 (cp: taint node-role.kubernetes.io/control-plane:NoSchedule)`, `step "nodes"`)
}

func TestDeleteLeftoversDeletesOnlySmokeNamespaces(t *testing.T) {
	k := fakeCluster(namespace(NamePrefix+"old01"), &corev1.Namespace{})
	other := &corev1.Namespace{}
	other.Name = "keep-me"
	if err := k.Client.Create(context.Background(), other); err != nil {
		t.Fatal(err)
	}
	deleted, err := DeleteLeftovers(context.Background(), CleanupInput{Cluster: k, Timeout: time.Second, Poll: 10 * time.Millisecond})
	if err != nil || len(deleted) != 1 || deleted[0] != NamePrefix+"old01" {
		t.Fatalf("deleted %v, err %v", deleted, err)
	}
	if err := k.Client.Get(context.Background(), client.ObjectKey{Name: "keep-me"}, other); err != nil {
		t.Errorf("deleted a namespace that is not the smoke test's: %v", err)
	}
	if _, err := DeleteLeftovers(context.Background(), CleanupInput{}); err == nil || !strings.Contains(err.Error(), "smoke.DeleteLeftovers: invalid input") {
		t.Errorf("invalid input accepted: %v", err)
	}
}
