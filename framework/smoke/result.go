package smoke

import (
	"github.com/tkg-e2e/harness/framework/wait"
)

// Result is what Run found out. It is filled as far as Run got: a failed
// step leaves the later fields empty and their proofs "not reached".
type Result struct {
	Cluster   string
	Namespace string
	Image     string
	// Nodes are all nodes, schedulable or not (with why not): schedulable
	// nodes get a server.
	Nodes []Node
	// ClientNodes are the nodes a client ran on: every Ready, uncordoned
	// Linux node, NoSchedule taints tolerated, so that on a cluster with one
	// worker the control plane's client still reaches the worker's server
	// across nodes.
	ClientNodes []string
	// Backends are the server pods, one per schedulable node.
	Backends []Backend
	// ServiceHost is the Service's DNS name, ServiceIP its ClusterIP.
	ServiceHost string
	ServiceIP   string
	// DNS has one lookup of ServiceHost per client.
	DNS []DNSLookup
	// Requests are every client's requests: one through the Service, one to
	// each backend's pod IP.
	Requests []Request
	// Clients are the client pods, with how they ended.
	Clients []Client
	// Proofs say what was proven, what failed and what could not be tried.
	Proofs []Proof
	// Steps are timed in the order they ran, cleanup included.
	Steps wait.Steps
	// Failure is the error of Run (redacted), "" when it passed.
	Failure string
}

// Backend is one server pod.
type Backend struct {
	Pod, Node, IP string
}

// DNSLookup is one client's lookup of the Service's name.
type DNSLookup struct {
	// From is the client's node.
	From    string
	OK      bool
	Address string
	// Error is the client's message, or why the answer is wrong (an address
	// that is not the Service's ClusterIP).
	Error string
}

// Via is how a request reached a server.
type Via string

const (
	ViaService Via = "service"
	ViaPodIP   Via = "pod IP"
)

// Request is one HTTP request of a client.
type Request struct {
	// From is the client's node.
	From string
	Via  Via
	// Target is the Service's DNS name or the backend pod asked for; URL is what was fetched.
	Target string
	URL    string
	// ToPod and ToNode say who answered (from the answer; through the
	// Service this is whichever backend kube-proxy chose).
	ToPod, ToNode string
	OK            bool
	Error         string
}

// CrossNode reports whether the request was answered on another node than
// the one it came from.
func (r Request) CrossNode() bool {
	return r.OK && r.ToNode != "" && r.From != "" && r.ToNode != r.From
}

// Client is one client pod and how it ended.
type Client struct {
	Pod, Node string
	// Phase is the pod's phase; ExitCode is set once the container ended.
	Phase    string
	ExitCode *int32
	// State is the pod's state in a few words when it did not succeed.
	State string
	// Problems are what its log lacks or contradicts (a check not reported,
	// an exit code that does not match the log); failed checks are in DNS
	// and Requests.
	Problems []string
	// Log is the client's log (redacted); the Markdown quotes its tail when
	// the client failed.
	Log string
}

// Status is the status of one proof.
type Status string

const (
	Proven Status = "proven"
	Failed Status = "failed"
	// NotPossible: the cluster cannot show it (clients on a single node,
	// e.g. a one-node cluster, cannot send traffic to another node). Not a
	// failure, and not a pass either.
	NotPossible Status = "not possible"
	// NotReached: an earlier step failed.
	NotReached Status = "not reached"
)

// Proof is one claim about the cluster and whether the run proved it.
type Proof struct {
	Claim  string
	Status Status
	Detail string
}

// The claims, in the order they are proven.
const (
	ClaimServers   = "a server is Ready on every schedulable node"
	ClaimDNS       = "every client node resolves the Service's name to its ClusterIP"
	ClaimService   = "the Service answers from every client node"
	ClaimPodIPs    = "every server answers on its pod IP from every client node"
	ClaimCrossNode = "pod traffic crosses from one node to another"
)

// Passed reports whether the run found no failure. A cluster where some
// proofs were not possible passes; Proven says whether everything was.
func (r *Result) Passed() bool { return r.Failure == "" }

// Proven reports whether every claim was proven (not merely not failed).
func (r *Result) Proven() bool {
	for _, p := range r.Proofs {
		if p.Status != Proven {
			return false
		}
	}
	return r.Passed() && len(r.Proofs) > 0
}
