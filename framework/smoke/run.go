package smoke

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/tkg-e2e/harness/framework/wait"
)

// The steps of a run, in order; a StepError names one of them.
const (
	StepNodes     = "nodes"
	StepNamespace = "namespace"
	StepServers   = "servers"
	StepClients   = "clients"
	StepCleanup   = "cleanup"
)

// StepError is the error of Run: the first step that failed and why. When
// the cleanup fails as well, Run joins a second StepError for it.
type StepError struct {
	Cluster string
	Step    string
	Err     error
}

// Error starts with the cause (the step's error's first line), then says
// where it happened: a one-line report shows why before what.
func (e *StepError) Error() string {
	first, rest, _ := strings.Cut(e.Err.Error(), "\n")
	msg := fmt.Sprintf("%s (smoke test of cluster %s, step %q)", first, e.Cluster, e.Step)
	if rest != "" {
		msg += "\n" + rest
	}
	return msg
}

func (e *StepError) Unwrap() error { return e.Err }

// logTailLines is how much of a failed client's log an error quotes; the
// Markdown has the whole log. logIndent sets the quoted lines apart.
const (
	logTailLines = 15
	logIndent    = "    "
)

type runner struct {
	in  Input
	ns  string
	res *Result
	p   wait.Printer
	// logs reads a client's log; a field so that tests can stand in for
	// the kubelet, which a fake clientset does not have.
	logs func(ctx context.Context, ns, pod string) (string, error)
	// reached records how far the run got, for the proofs.
	serversReached, clientsReached bool
}

// Run proves that the cluster serves workloads (see the package comment)
// and always returns a Result, also with an error, unless the input is
// invalid. The namespace it creates is deleted before it returns, also when
// ctx is cancelled (the deletion then gets its own Timeout).
func Run(ctx context.Context, in Input) (*Result, error) {
	if err := in.validate(); err != nil {
		return nil, err
	}
	in.defaults()
	r := &runner{in: in, logs: clientsetLogs(in.Cluster.Clientset)}
	return r.run(ctx)
}

func clientsetLogs(cs kubernetes.Interface) func(ctx context.Context, ns, pod string) (string, error) {
	return func(ctx context.Context, ns, pod string) (string, error) {
		// The script prints a few lines per backend; the cap only guards
		// against an image whose sh is not what the script expects.
		limit := int64(256 << 10)
		b, err := cs.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: clientContainer, LimitBytes: &limit}).DoRaw(ctx)
		return string(b), err
	}
}

func (r *runner) run(ctx context.Context) (*Result, error) {
	r.p = wait.Printer{W: r.in.Progress, Prefix: r.in.Prefix}
	r.res = &Result{Cluster: r.in.ClusterName, Image: r.in.Image}
	err := r.steps(ctx)
	if r.ns != "" {
		// The caller's context may be what ended the run (an interrupt):
		// the namespace must go all the same.
		cctx := context.WithoutCancel(ctx)
		if cerr := r.res.Steps.Time(StepCleanup, func() error {
			return deleteNamespaces(cctx, r.in.Cluster.Client, []string{r.ns}, r.waitOptions(""))
		}); cerr != nil {
			err = errors.Join(err, &StepError{Cluster: r.in.ClusterName, Step: StepCleanup,
				Err: fmt.Errorf("%w (delete it with kubectl delete namespace %s, or smoke.DeleteLeftovers)", cerr, r.ns)})
		} else {
			r.p.Printf("namespace %s deleted", r.ns)
		}
	}
	r.res.Proofs = prove(r.res, r.serversReached, r.clientsReached)
	if err != nil {
		// The error quotes states and logs that went through the Redactor
		// already; Failure is masked once more as it goes into smoke.md.
		r.res.Failure = r.in.Redactor.String(err.Error())
	}
	return r.res, err
}

func (r *runner) steps(ctx context.Context) error {
	for _, s := range []struct {
		name string
		f    func(context.Context) error
	}{{StepNodes, r.nodes}, {StepNamespace, r.namespace}, {StepServers, r.servers}, {StepClients, r.clients}} {
		if err := r.res.Steps.Time(s.name, func() error { return s.f(ctx) }); err != nil {
			return &StepError{Cluster: r.in.ClusterName, Step: s.name, Err: err}
		}
	}
	return nil
}

func (r *runner) waitOptions(what string) wait.Options {
	return wait.Options{What: what, Timeout: r.in.Timeout, Interval: r.in.Poll, Progress: r.in.Progress, Prefix: r.in.Prefix, Grace: r.in.Grace}
}

// nodes sorts the nodes: the schedulable ones (no toleration) get a server,
// the client nodes (NoSchedule tolerated) a client.
func (r *runner) nodes(ctx context.Context) error {
	list := corev1.NodeList{}
	if err := r.in.Cluster.Client.List(ctx, &list); err != nil {
		return fmt.Errorf("listing nodes: %w", err)
	}
	r.res.Nodes = schedulableNodes(list.Items, podTolerations)
	clientNodes := schedulableNodes(list.Items, clientTolerations)
	r.res.ClientNodes = names(clientNodes, true)
	schedulable := names(r.res.Nodes, true)
	r.p.Printf("schedulable nodes: %s (left out: %s); clients on %s", orNone(strings.Join(schedulable, ", ")), leftOut(r.res.Nodes),
		orNone(strings.Join(r.res.ClientNodes, ", ")))
	switch {
	case len(schedulable) == 0:
		return fmt.Errorf("no schedulable node among %d (%s): the servers need a Ready, uncordoned Linux node "+
			"without a NoSchedule or NoExecute taint (a cluster with only a control plane needs a worker, or the taint removed)",
			len(r.res.Nodes), leftOut(r.res.Nodes))
	case len(r.res.ClientNodes) < 2 && r.in.RequireCrossNode:
		return fmt.Errorf("clients can run on one node only (%s; left out: %s) and RequireCrossNode is set: "+
			"traffic between nodes needs two; add a node or unset RequireCrossNode", orNone(strings.Join(r.res.ClientNodes, ", ")), leftOut(clientNodes))
	}
	return nil
}

func (r *runner) namespace(ctx context.Context) error {
	name := NamePrefix + utilrand.String(5)
	if err := r.in.Cluster.Client.Create(ctx, namespace(name)); err != nil {
		return refused(err, "namespace "+name)
	}
	r.ns, r.res.Namespace = name, name
	r.res.ServiceHost = fmt.Sprintf("%s.%s.svc.%s", serverName, name, r.in.ClusterDomain)
	r.p.Printf("namespace %s created", name)
	return nil
}

func (r *runner) servers(ctx context.Context) error {
	want := len(names(r.res.Nodes, true))
	r.serversReached = true
	for _, obj := range []client.Object{deployment(r.ns, r.in.Image, want), service(r.ns)} {
		if err := r.in.Cluster.Client.Create(ctx, obj); err != nil {
			kind := fmt.Sprintf("%T", obj)
			if gvk, gerr := apiutil.GVKForObject(obj, r.in.Cluster.Client.Scheme()); gerr == nil {
				kind = gvk.Kind
			}
			return refused(err, fmt.Sprintf("%s %s/%s", kind, r.ns, obj.GetName()))
		}
	}
	backends, err := r.waitServers(ctx, want)
	r.res.Backends = backends
	if err != nil {
		return err
	}
	svc := corev1.Service{}
	if err := r.in.Cluster.Client.Get(ctx, types.NamespacedName{Namespace: r.ns, Name: serverName}, &svc); err != nil {
		return fmt.Errorf("reading Service %s/%s: %w", r.ns, serverName, err)
	}
	if svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return fmt.Errorf("Service %s/%s has no ClusterIP (%q)", r.ns, serverName, svc.Spec.ClusterIP)
	}
	r.res.ServiceIP = svc.Spec.ClusterIP
	if err := r.waitEndpointSlices(ctx, backends); err != nil {
		return err
	}
	r.p.Printf("servers Ready: %s; Service %s → %s, its EndpointSlices list all %d", backendsLine(backends), r.res.ServiceHost, r.res.ServiceIP, len(backends))
	return nil
}

// clients runs a client on every client node (ClientNodes: every Ready,
// uncordoned Linux node, a control plane tainted NoSchedule included) and
// turns their logs into the result; any failed or unreported check fails
// the step.
func (r *runner) clients(ctx context.Context) error {
	budget, attempt := clientBudget(r.in.Timeout, r.in.Poll, len(r.res.Backends))
	nodeOf := map[string]string{}
	for i, node := range r.res.ClientNodes {
		name := clientName(i)
		nodeOf[name] = node
		pod := clientPod(r.ns, name, node, r.in.Image, r.res.ServiceHost, r.res.Backends, budget, attempt)
		if err := r.in.Cluster.Client.Create(ctx, pod); err != nil {
			return refused(err, fmt.Sprintf("client pod %s/%s for node %s", r.ns, name, node))
		}
	}
	pods, werr := r.waitClients(ctx, nodeOf)
	// Read what there is also after a timeout: a client that ended, or one
	// still retrying, says in its log what it is stuck on.
	var problems []string
	for i := range pods {
		p := &pods[i]
		node := nodeOf[p.Name]
		log, err := r.logs(ctx, r.ns, p.Name)
		if err != nil {
			log = ""
			problems = append(problems, fmt.Sprintf("%s on %s: reading its log: %v", p.Name, node, err))
		}
		log = r.in.Redactor.String(log)
		c, rep := clientOutcome(p, node, log, r.res.ServiceIP, r.res.Backends)
		r.res.Clients = append(r.res.Clients, c)
		if rep.DNS != nil {
			r.res.DNS = append(r.res.DNS, *rep.DNS)
		}
		r.res.Requests = append(r.res.Requests, rep.Requests...)
		if werr != nil {
			continue // the wait's error says what is missing
		}
		if p := clientProblems(c, rep); p != "" {
			problems = append(problems, p)
		}
	}
	if werr != nil {
		return fmt.Errorf("%w%s", werr, logTails(r.res.Clients))
	}
	r.clientsReached = true
	for _, c := range r.res.Clients {
		r.p.Printf("client on %s: %s", c.Node, clientSummary(c, r.res))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%d of %d clients found problems:\n%s", len(problems), len(nodeOf), strings.Join(problems, "\n"))
	}
	return nil
}

// clientProblems is "" for a client whose every check passed, else its
// failed checks and the tail of its log.
func clientProblems(c Client, rep clientReport) string {
	var bad []string
	if rep.DNS != nil && !rep.DNS.OK {
		bad = append(bad, "DNS lookup: "+errOr(rep.DNS.Error))
	}
	for _, q := range rep.Requests {
		if !q.OK {
			bad = append(bad, fmt.Sprintf("request to %s via %s (%s): %s", q.Target, q.Via, q.URL, errOr(q.Error)))
		}
	}
	bad = append(bad, rep.Problems...)
	if len(bad) == 0 {
		return ""
	}
	head := fmt.Sprintf("- %s on node %s", c.Pod, c.Node)
	if c.State != "" {
		head += " (" + c.State + ")"
	}
	return head + ": " + strings.Join(bad, "; ") + "\n" + tail(c.Log, logTailLines, logIndent)
}

func logTails(clients []Client) string {
	var b strings.Builder
	for _, c := range clients {
		if c.Log != "" {
			fmt.Fprintf(&b, "\n- log of %s on node %s:\n%s", c.Pod, c.Node, tail(c.Log, logTailLines, logIndent))
		}
	}
	return b.String()
}

func clientSummary(c Client, res *Result) string {
	ok, total := 0, 0
	for _, q := range res.Requests {
		if q.From == c.Node {
			total++
			if q.OK {
				ok++
			}
		}
	}
	dns := "no lookup"
	for _, d := range res.DNS {
		if d.From == c.Node {
			dns = "DNS " + map[bool]string{true: "ok", false: "failed"}[d.OK]
		}
	}
	return fmt.Sprintf("%s, %d/%d requests ok", dns, ok, total)
}

// tail returns the last n lines of s, each indented.
func tail(s string, n int, indent string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("(last %d of %d lines)", n, len(lines))}, lines[len(lines)-n:]...)
	}
	return indent + strings.Join(lines, "\n"+indent)
}

// refused is a create the API answered with an error: the API's words
// first (they name what refused: a webhook, a policy, a quota), then what
// was being created. It ends the step at once: asking again gets the same
// answer.
func refused(err error, what string) error {
	return fmt.Errorf("%w (refused the create of %s)", err, what)
}
