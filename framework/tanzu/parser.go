package tanzu

import (
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Phase is one step of a tanzu command, as its output marks it. Start and
// End are when the marker lines reached the harness (arrival time): the
// CLI stamps only some of its lines, and a stamp says when the CLI wrote a
// line, not how long the harness waited, which is what a stage report and a
// timeout budget need.
type Phase struct {
	Name string `json:"name"`
	// Marker is the (redacted) line that started the phase; empty for the
	// implicit first phase, which starts with the command.
	Marker string `json:"marker,omitempty"`
	// Stamp is the CLI's own timestamp on the marker line, when it had one
	// ("2023-01-10T19:50:48.605Z"); kept for matching the transcript.
	Stamp    string        `json:"stamp,omitempty"`
	Start    time.Time     `json:"start"`
	End      time.Time     `json:"end"`
	Duration time.Duration `json:"duration"`
}

// Phase names. They are the steps of `tanzu management-cluster create` and
// `tanzu cluster create` in seed 000, in the order the CLI runs them.
const (
	PhasePrepare = "prepare" // validation, config, before any marker

	PhaseBootstrapCreate     = "bootstrap-create"     // kind cluster
	PhaseBootstrapSetup      = "bootstrap-setup"      // kapp-controller, clusterctl init on kind
	PhaseBootstrapProviders  = "bootstrap-providers"  // waiting for providers on kind
	PhaseBootstrapPackages   = "bootstrap-packages"   // tkg-pkg on kind
	PhaseManagementCreate    = "management-create"    // Cluster applied, control plane coming up
	PhaseManagementSetup     = "management-setup"     // kubeconfig saved, kapp-controller, clusterctl init
	PhaseManagementProviders = "management-providers" // waiting for providers on the management cluster
	PhaseManagementPackages  = "management-packages"  // tkg-pkg on the management cluster
	PhaseMovePrepare         = "move-prepare"         // waiting for the cluster to be ready for move, addons
	PhaseMove                = "move"                 // clusterctl move, patches
	PhaseBootstrapDelete     = "bootstrap-delete"     // kind deleted

	PhaseWorkloadCreate       = "workload-create"        // Cluster applied
	PhaseWorkloadControlPlane = "workload-control-plane" // waiting for the control plane
	PhaseWorkloadNodes        = "workload-nodes"         // waiting for nodes
	PhaseWorkloadPackages     = "workload-packages"      // core addon PackageInstalls

	PhaseFinish = "finish" // after the CLI said the cluster is created (plugin sync, hints)
)

// stampRE is the timestamp the CLI's log wrapper puts in front of lines.
var stampRE = regexp.MustCompile(`^\s*\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z)\]\s?`)

// splitStamp returns the CLI's timestamp (empty when the line has none) and
// the message with the stamp and surrounding blanks removed.
func splitStamp(line string) (stamp, msg string) {
	if m := stampRE.FindStringSubmatchIndex(line); m != nil {
		return line[m[2]:m[3]], strings.TrimSpace(line[m[1]:])
	}
	return "", strings.TrimSpace(line)
}

type marker struct {
	// phase returns the phase the line starts, given whether the management
	// cluster's kubeconfig was already announced (the same message opens a
	// bootstrap step and a management step), or "" when the line is no marker.
	match func(msg string, management bool) string
}

func prefix(p, phase string) marker {
	return marker{func(msg string, _ bool) string {
		if strings.HasPrefix(msg, p) {
			return phase
		}
		return ""
	}}
}

func contains(s, bootstrapPhase, managementPhase string) marker {
	return marker{func(msg string, management bool) string {
		if !strings.Contains(msg, s) {
			return ""
		}
		if management {
			return managementPhase
		}
		return bootstrapPhase
	}}
}

var (
	kindCreateRE           = regexp.MustCompile(`^Creating kind cluster: (\S+)`)
	bootstrapKubeconfigRE  = regexp.MustCompile(`^Bootstrapper created\. Kubeconfig: (\S+)`)
	managementKubeconfigRE = regexp.MustCompile(`^Saving management cluster kubeconfig into (\S+)`)
	// The CLI writes "creating workload cluster 'x'..." at -v 9; the
	// capitalised form is accepted too so a change of case does not lose the
	// phase.
	workloadCreateRE  = regexp.MustCompile(`^(?i:creating workload cluster) '([^']+)'`)
	workloadCreatedRE = regexp.MustCompile(`^Workload cluster '([^']+)' created`)
)

var markers = []marker{
	prefix("Setting up bootstrapper...", PhaseBootstrapCreate),
	prefix("Bootstrapper created. Kubeconfig:", PhaseBootstrapSetup),
	contains("Waiting for provider ", PhaseBootstrapProviders, PhaseManagementProviders),
	contains("waiting for package: tkg-pkg", PhaseBootstrapPackages, PhaseManagementPackages),
	prefix("Start creating management cluster...", PhaseManagementCreate),
	prefix("Saving management cluster kubeconfig into", PhaseManagementSetup),
	prefix("Waiting for the management cluster to get ready for move...", PhaseMovePrepare),
	prefix("Moving all Cluster API objects from bootstrap cluster to management cluster...", PhaseMove),
	prefix("Deleting kind cluster:", PhaseBootstrapDelete),
	prefix("Management cluster created!", PhaseFinish),
	{func(msg string, _ bool) string {
		if workloadCreateRE.MatchString(msg) {
			return PhaseWorkloadCreate
		}
		return ""
	}},
	prefix("waiting for cluster to be initialized...", PhaseWorkloadControlPlane),
	prefix("waiting for cluster nodes to be available...", PhaseWorkloadNodes),
	prefix("waiting for addons core packages installation...", PhaseWorkloadPackages),
	{func(msg string, _ bool) string {
		if workloadCreatedRE.MatchString(msg) {
			return PhaseFinish
		}
		return ""
	}},
}

// Hooks are called as the command's output arrives, on the goroutine that
// reads it: a hook that blocks stalls the reading, and the CLI blocks on a
// full pipe. Start slow work (attaching a cluster) in a goroutine of its own.
type Hooks struct {
	// OnBootstrapName gets the kind cluster's name when the CLI starts to
	// create it, before any container exists: a command killed while kind
	// works still leaves the name to clean up by.
	OnBootstrapName func(name string)
	// OnBootstrapKubeconfig gets the kind bootstrap cluster's kubeconfig as
	// soon as the CLI announces it, so the caller can attach the cluster and
	// still collect its logs when the command fails before the move.
	OnBootstrapKubeconfig func(path string)
	// OnManagementKubeconfig gets the file the CLI saved the management
	// cluster's kubeconfig into.
	OnManagementKubeconfig func(path string)
	// OnPhase gets every phase when it ends: at the next marker, or when the
	// command ends (the last one).
	OnPhase func(Phase)
}

// Parser turns a tanzu command's output, line by line as it arrives, into
// phases and kubeconfig events. It is not safe for concurrent use; the
// Runner feeds it from one goroutine.
type Parser struct {
	hooks Hooks
	dir   string

	phases     []Phase
	seen       map[string]bool
	management bool
	done       bool

	// BootstrapName is the kind cluster the CLI said it creates.
	BootstrapName        string
	BootstrapKubeconfig  string
	ManagementKubeconfig string
	// ClusterName is the workload cluster the CLI named, if any.
	ClusterName string
	// Completed says the CLI printed its success line (Management cluster
	// created!, Workload cluster '…' created).
	Completed bool
}

// NewParser starts the implicit first phase at start. dir resolves a
// relative kubeconfig path the CLI prints (its working directory).
func NewParser(start time.Time, dir string, hooks Hooks) *Parser {
	return &Parser{
		hooks:  hooks,
		dir:    dir,
		phases: []Phase{{Name: PhasePrepare, Start: start}},
		seen:   map[string]bool{PhasePrepare: true},
	}
}

// Line takes one line (already redacted: it may be stored as a Marker) that
// arrived at at.
func (p *Parser) Line(at time.Time, line string) {
	if p.done {
		return
	}
	stamp, msg := splitStamp(line)
	if msg == "" {
		return
	}
	if m := kindCreateRE.FindStringSubmatch(msg); m != nil && p.BootstrapName == "" {
		p.BootstrapName = m[1]
		if p.hooks.OnBootstrapName != nil {
			p.hooks.OnBootstrapName(m[1])
		}
	}
	if m := bootstrapKubeconfigRE.FindStringSubmatch(msg); m != nil && p.BootstrapKubeconfig == "" {
		p.BootstrapKubeconfig = p.abs(m[1])
		if p.hooks.OnBootstrapKubeconfig != nil {
			p.hooks.OnBootstrapKubeconfig(p.BootstrapKubeconfig)
		}
	}
	if m := managementKubeconfigRE.FindStringSubmatch(msg); m != nil && p.ManagementKubeconfig == "" {
		p.ManagementKubeconfig = p.abs(m[1])
		p.management = true
		if p.hooks.OnManagementKubeconfig != nil {
			p.hooks.OnManagementKubeconfig(p.ManagementKubeconfig)
		}
	}
	if m := workloadCreateRE.FindStringSubmatch(msg); m != nil && p.ClusterName == "" {
		p.ClusterName = m[1]
	}
	for _, mk := range markers {
		name := mk.match(msg, p.management)
		if name == "" {
			continue
		}
		// A marker repeats (one "Waiting for provider" line per provider);
		// the phase starts at its first line and a step never comes back.
		if p.seen[name] {
			return
		}
		p.seen[name] = true
		p.endCurrent(at)
		p.phases = append(p.phases, Phase{Name: name, Marker: strings.TrimSpace(line), Stamp: stamp, Start: at})
		if name == PhaseFinish {
			p.Completed = true
		}
		return
	}
}

func (p *Parser) abs(path string) string {
	if filepath.IsAbs(path) || p.dir == "" {
		return path
	}
	return filepath.Join(p.dir, path)
}

func (p *Parser) endCurrent(at time.Time) {
	cur := &p.phases[len(p.phases)-1]
	cur.End = at
	cur.Duration = at.Sub(cur.Start)
	if p.hooks.OnPhase != nil {
		p.hooks.OnPhase(*cur)
	}
}

// Current is the name of the phase running now (the last one once Finish
// was called).
func (p *Parser) Current() string { return p.phases[len(p.phases)-1].Name }

// Finish ends the last phase at end (the command's end) and returns every
// phase in order. Later lines are ignored.
func (p *Parser) Finish(end time.Time) []Phase {
	if !p.done {
		p.done = true
		p.endCurrent(end)
	}
	return append([]Phase(nil), p.phases...)
}
