package report

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/tkg-e2e/harness/framework/artifacts"
	"github.com/tkg-e2e/harness/framework/stages"
)

// Categories of failure: who has to act first. They are the stage registry's
// categories, plus None for a run that passed.
const (
	Infrastructure = stages.Infrastructure
	Provider       = stages.Provider
	Package        = stages.Package
	Placement      = stages.Placement
	Harness        = stages.Harness
	Conformance    = stages.Conformance
	// None: the run passed.
	None = "none"
)

// Classification is the one line that says where to start reading.
type Classification struct {
	Category string `json:"category"`
	// Rule names the rule that matched, for tests and for tuning the rules.
	Rule   string `json:"rule"`
	Reason string `json:"reason"`
}

func (c Classification) String() string {
	return fmt.Sprintf("%s: %s (rule %s)", c.Category, c.Reason, c.Rule)
}

// Evidence is what the rules look at.
type Evidence struct {
	Passed bool
	// Stopped: nothing failed and a stage stopped at a rehearsal limit.
	Stopped bool
	Stage   string
	// StageCategory is the failing stage's category from the stage registry;
	// empty when the failure happened outside any registered stage.
	StageCategory string
	Message       string
	Clusters      []artifacts.ClusterFindings
	VSphere       *artifacts.VSphereFindings
	NothingRan    bool
}

type rule struct {
	name     string
	category string
	match    func(e Evidence) (reason string, ok bool)
}

// Classify applies the rules in order; the first that matches wins. The
// order encodes causality: what breaks first in the lifecycle is reported,
// not its consequences (a VM that never booted also leaves a Machine without
// a node, a Cluster not Available and packages that never reconciled).
func Classify(e Evidence) Classification {
	for _, r := range rules {
		if reason, ok := r.match(e); ok {
			category := r.category
			if category == "" {
				category = e.StageCategory
			}
			return Classification{Category: category, Rule: r.name, Reason: reason}
		}
	}
	return Classification{Category: Harness, Rule: "fallback",
		Reason: "no rule matched the collected evidence; the failure is in the harness's own checks or unexplained: read the failure message"}
}

var (
	panicRe    = regexp.MustCompile(`(?i)\bpanic:|runtime error:|nil pointer dereference|index out of range`)
	infraRe    = regexp.MustCompile(`(?i)vcenter|govmomi|\bsoap\b|vim25|ServerFaultCode|datastore|resource ?pool|insufficient (resources|memory|cpu|disk)|no space left on device|cannot connect to the docker daemon|docker\.sock|failed to create (the )?kind cluster|kind create cluster`)
	webhookRe  = regexp.MustCompile(`(?i)failed calling webhook|webhook[^\n]*(connection refused|no endpoints available|i/o timeout|x509|context deadline exceeded)`)
	dockerRe   = regexp.MustCompile(`(?i)cannot connect to the docker daemon|docker\.sock|connection refused|permission denied|is the docker daemon running`)
	cniRe      = regexp.MustCompile(`(?i)\bcni\b|network plugin|NetworkReady=false|NetworkPluginNotReady`)
	packageRe  = regexp.MustCompile(`(?i)packageinstall|packagerepository|ReconcileFailed|kapp-controller|\bkapp\b|carvel`)
	placeRe    = regexp.MustCompile(`(?i)placement|unschedulable|didn't match pod's node affinity|untolerated taint|FailedScheduling`)
	providerRe = regexp.MustCompile(`(?i)clusterctl|cluster ?api|KubeadmControlPlane|KubeadmConfig|MachineDeployment|MachineSet|DockerMachine|DockerCluster|VSphereMachine|VSphereCluster|\bcap[dvi]\b|capi-|cert-manager|control plane`)
	inputRe    = regexp.MustCompile(`(?i)bad input|invalid (config|profile|value)|(?:^|[^-/\w])config(uration)?\b[^\n]*(invalid|error)|is required|must be set|unknown flag|denied the request|cannot resume`)
)

var leaseLostRe = regexp.MustCompile(`(?m)^lease lost: `)

var interruptedRe = regexp.MustCompile(`(?i)interrupted by user|^interrupted: `)

var rules = []rule{
	{"passed", None, func(e Evidence) (string, bool) { return "the run passed", e.Passed }},
	{"rehearsal-limit", None, func(e Evidence) (string, bool) {
		return "nothing failed; stage " + orNone(e.Stage) + " stopped where the stand-in vCenter cannot go further: " + firstLineOf(e.Message), e.Stopped
	}},
	// A testbed taken back by Boskos (a reaper after missed heartbeats, a
	// person) stopped the run: nothing it found after that is evidence.
	{"lease-lost", Infrastructure, func(e Evidence) (string, bool) {
		return "the run's Boskos lease was lost during stage " + orNone(e.Stage) + ": " + firstLineOf(e.Message), leaseLostRe.MatchString(e.Message)
	}},
	// An interrupted run did not fail on its own: say so before any evidence
	// the interruption itself left (half-created Machines) is read as a cause.
	{"interrupted", Harness, func(e Evidence) (string, bool) {
		return "the run was interrupted (Ctrl-C or a signal) during stage " + orNone(e.Stage), interruptedRe.MatchString(e.Message)
	}},
	// The tanzu CLI's own failure, as framework/tanzu classified it from
	// what the CLI printed: its words are the nearest evidence (what it
	// left in the clusters is a consequence). Its unknown failures fall
	// through to the evidence rules. The kinds are tanzu.Kind* (the report
	// does not import the driver's library; a test keeps them equal).
	tanzuRule("tanzu-provider-timeout", "provider wait timeout", Provider),
	tanzuRule("tanzu-package-reconcile", "package reconcile failure", Package),
	tanzuRule("tanzu-vcenter", "vCenter error", Infrastructure),
	tanzuRule("tanzu-timeout", "timeout", Provider),
	tanzuRule("tanzu-interrupted", "interrupted", Harness),
	{"harness-panic", Harness, func(e Evidence) (string, bool) {
		return "the harness panicked: " + firstLineOf(matchLine(panicRe, e.Message)), panicRe.MatchString(e.Message)
	}},
	{"vcenter-unreachable", Infrastructure, func(e Evidence) (string, bool) {
		if e.VSphere != nil && e.VSphere.APIError != "" {
			return "vCenter could not be reached: " + firstLineOf(e.VSphere.APIError), true
		}
		return "", false
	}},
	{"docker-unreachable", Infrastructure, func(e Evidence) (string, bool) {
		for _, c := range e.Clusters {
			if c.DockerError != "" && dockerRe.MatchString(c.DockerError) {
				return "the Docker engine did not answer for cluster " + c.Name + ": " + firstLineOf(c.DockerError), true
			}
		}
		return "", false
	}},
	{"vcenter-task-failed", Infrastructure, func(e Evidence) (string, bool) {
		if e.VSphere != nil && len(e.VSphere.FailedTasks) > 0 {
			t := e.VSphere.FailedTasks[0]
			return fmt.Sprintf("vCenter task %s on %s failed: %s", t.Name, t.Entity, firstLineOf(t.Error)), true
		}
		return "", false
	}},
	{"infrastructure-error", Infrastructure, func(e Evidence) (string, bool) {
		return "the failure names the infrastructure: " + firstLineOf(matchLine(infraRe, e.Message)), infraRe.MatchString(e.Message)
	}},
	{"webhook-unavailable", Provider, func(e Evidence) (string, bool) {
		return "a provider's admission webhook did not answer: " + firstLineOf(matchLine(webhookRe, e.Message)), webhookRe.MatchString(e.Message)
	}},
	{"machine-without-infrastructure", Infrastructure, func(e Evidence) (string, bool) {
		for _, c := range e.Clusters {
			for _, m := range c.MachinesWithoutNodeRef {
				if !m.InfrastructureProvisioned {
					return fmt.Sprintf("Machine %s/%s has no provisioned infrastructure (phase %s)%s", m.Namespace, m.Name, orDash(m.Phase), suffix(m.Message)), true
				}
			}
		}
		return "", false
	}},
	{"node-without-cni", Harness, func(e Evidence) (string, bool) {
		for _, c := range e.Clusters {
			for _, n := range c.NotReadyNodes {
				if cniRe.MatchString(n.Message) || cniRe.MatchString(n.Reason) {
					return fmt.Sprintf("node %s of %s is NotReady for lack of a CNI, which the harness applies: %s", n.Name, c.Name, firstLineOf(n.Message)), true
				}
			}
		}
		return "", false
	}},
	{"node-not-ready", Infrastructure, func(e Evidence) (string, bool) {
		for _, c := range e.Clusters {
			for _, n := range c.NotReadyNodes {
				return fmt.Sprintf("node %s of %s is not Ready (%s)%s", n.Name, c.Name, orDash(n.Reason), suffix(n.Message)), true
			}
		}
		return "", false
	}},
	{"controller-pod-failing", Provider, func(e Evidence) (string, bool) {
		for _, c := range e.Clusters {
			for _, p := range c.NotReadyPods {
				if artifacts.IsControllerNamespace(p.Namespace) {
					return fmt.Sprintf("controller pod %s/%s in %s is not ready (%s, %d restarts)%s", p.Namespace, p.Name, c.Name, orDash(p.Reason), p.Restarts, suffix(p.Message)), true
				}
			}
		}
		return "", false
	}},
	{"machine-not-bootstrapped", Provider, func(e Evidence) (string, bool) {
		for _, c := range e.Clusters {
			for _, m := range c.MachinesWithoutNodeRef {
				return fmt.Sprintf("Machine %s/%s has infrastructure but never became a node (bootstrap or control plane provider)%s", m.Namespace, m.Name, suffix(m.Message)), true
			}
		}
		return "", false
	}},
	{"api-unreachable", Infrastructure, func(e Evidence) (string, bool) {
		for _, c := range e.Clusters {
			if c.APIError != "" {
				return fmt.Sprintf("the API server of %s cluster %s did not answer: %s", orDash(c.Role), c.Name, firstLineOf(c.APIError)), true
			}
		}
		return "", false
	}},
	{"package-failed", Package, func(e Evidence) (string, bool) {
		for _, c := range e.Clusters {
			for _, p := range c.FailedPackages {
				return fmt.Sprintf("PackageInstall %s/%s (%s %s) failed to reconcile: %s", p.Namespace, p.Name, orDash(p.Package), orDash(p.Version), firstLineOf(p.Message)), true
			}
		}
		return "", false
	}},
	{"pod-unschedulable", Placement, func(e Evidence) (string, bool) {
		for _, c := range e.Clusters {
			for _, p := range c.NotReadyPods {
				if p.Unschedulable {
					return fmt.Sprintf("pod %s/%s in %s cannot be scheduled: %s", p.Namespace, p.Name, c.Name, firstLineOf(p.Message)), true
				}
			}
		}
		return "", false
	}},
	{"cluster-not-available", Provider, func(e Evidence) (string, bool) {
		for _, c := range e.Clusters {
			for _, t := range c.ConditionTrees {
				if !t.Ready {
					return fmt.Sprintf("Cluster %s is not Available: %s", t.Cluster, firstLineOf(t.Text)), true
				}
			}
		}
		return "", false
	}},
	{"package-message", Package, func(e Evidence) (string, bool) {
		return "the failure names a package: " + firstLineOf(matchLine(packageRe, e.Message)), packageRe.MatchString(e.Message) || e.StageCategory == Package
	}},
	{"placement-message", Placement, func(e Evidence) (string, bool) {
		return "the placement check failed: " + firstLineOf(e.Message), placeRe.MatchString(e.Message) || e.StageCategory == Placement
	}},
	{"provider-message", Provider, func(e Evidence) (string, bool) {
		return "the failure names Cluster API or a provider: " + firstLineOf(matchLine(providerRe, e.Message)), providerRe.MatchString(e.Message)
	}},
	{"harness-input", Harness, func(e Evidence) (string, bool) {
		return "the run's own input was rejected: " + firstLineOf(matchLine(inputRe, e.Message)), inputRe.MatchString(e.Message)
	}},
	// Category "" takes the failing stage's category from the registry.
	{"stage-hint", "", func(e Evidence) (string, bool) {
		return fmt.Sprintf("stage %q failed and no collected evidence points elsewhere: %s", e.Stage, firstLineOf(orDash(e.Message))), e.StageCategory != ""
	}},
	{"nothing-ran", Harness, func(e Evidence) (string, bool) {
		return "the run ended before any stage or cluster existed: " + firstLineOf(orDash(e.Message)), e.NothingRan
	}},
}

// tanzuFailedRe is the first line of a failed tanzu command's stage
// message (tanzu.Failure.Error): "<command> failed (<kind>)…".
var tanzuFailedRe = regexp.MustCompile(`(?m)^(tanzu (?:management-cluster|cluster) \S+)[^\n]* failed \(([^)]+)\)`)

func tanzuRule(name, kind, category string) rule {
	return rule{name, category, func(e Evidence) (string, bool) {
		m := tanzuFailedRe.FindStringSubmatch(e.Message)
		if m == nil || m[2] != kind {
			return "", false
		}
		return fmt.Sprintf("the tanzu CLI failed (%s) during stage %s: %s", kind, orNone(e.Stage), firstLineOf(matchLine(tanzuFailedRe, e.Message))), true
	}}
}

func matchLine(re *regexp.Regexp, s string) string {
	for _, l := range strings.Split(s, "\n") {
		if re.MatchString(l) {
			return l
		}
	}
	return s
}

func firstLineOf(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func suffix(msg string) string {
	if msg == "" {
		return ""
	}
	return ": " + firstLineOf(msg)
}
