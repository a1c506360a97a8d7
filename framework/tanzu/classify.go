package tanzu

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/tkg-e2e/harness/framework/assert"
)

// Kind is what made a tanzu command fail, as far as its output and the way
// it ended tell.
type Kind string

const (
	// KindProviderTimeout: the CLI gave up waiting for Cluster API
	// providers (on kind or on the management cluster).
	KindProviderTimeout Kind = "provider wait timeout"
	// KindPackageReconcile: a PackageInstall (tkg-pkg or one of its
	// children, or a workload cluster's core add-on) failed to reconcile.
	KindPackageReconcile Kind = "package reconcile failure"
	// KindVCenter: the CLI could not log in to vCenter, reach it, or was
	// denied an operation there.
	KindVCenter Kind = "vCenter error"
	// KindTimeout: the harness killed the command at its timeout.
	KindTimeout Kind = "timeout"
	// KindInterrupted: the command was interrupted (Ctrl-C on the harness,
	// or a SIGINT from elsewhere).
	KindInterrupted Kind = "interrupted"
	// KindUnknown: it failed and nothing above matched; the quoted lines are
	// the CLI's error lines or its last lines.
	KindUnknown Kind = "unknown"
)

// Failure is a failed tanzu command, classified, with the lines of its
// output that say why. Every string in it is redacted. It is an error, so
// Run's error carries it (errors.As).
type Failure struct {
	Kind Kind `json:"kind"`
	// Command is the command line, redacted ("tanzu management-cluster create --file … -v 9").
	Command string `json:"command"`
	// Phase is the phase the command was in when it failed.
	Phase string `json:"phase,omitempty"`
	// ExitCode is the exit status (-1 when a signal ended it, named in Signal).
	ExitCode int    `json:"exitCode"`
	Signal   string `json:"signal,omitempty"`
	// Timeout is the limit that was hit, for KindTimeout.
	Timeout time.Duration `json:"timeout,omitempty"`
	// Pending lists what the CLI was still waiting for: providers it was
	// waiting on and never passed, PackageInstalls it waited on and never
	// saw reconciled.
	Pending []string `json:"pending,omitempty"`
	// UsefulErrorMessage is kapp-controller's message for a failed
	// PackageInstall, when the CLI printed it.
	UsefulErrorMessage string `json:"usefulErrorMessage,omitempty"`
	// Quoted are the lines that matter, as printed (stamps kept).
	Quoted []string `json:"quoted"`
}

func (f *Failure) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s failed (%s)", f.Command, f.Kind)
	if f.Phase != "" {
		fmt.Fprintf(&b, " in phase %s", f.Phase)
	}
	b.WriteString(": " + f.ended(false))
	if len(f.Pending) > 0 {
		fmt.Fprintf(&b, "; still waiting for %s", strings.Join(f.Pending, ", "))
	}
	if f.UsefulErrorMessage != "" {
		fmt.Fprintf(&b, "; usefulErrorMessage: %s", assert.Shorten(f.UsefulErrorMessage, 300))
	}
	if len(f.Quoted) > 0 {
		fmt.Fprintf(&b, "; last relevant line: %s", assert.Shorten(f.Quoted[len(f.Quoted)-1], 300))
	}
	return b.String()
}

// ended says how the command ended; how says by what means too, for the
// summary.
func (f *Failure) ended(how bool) string {
	switch {
	case f.Kind == KindTimeout && how:
		return fmt.Sprintf("killed by the harness after %s (SIGINT to its process group, then SIGKILL)", f.Timeout)
	case f.Kind == KindTimeout:
		return fmt.Sprintf("killed after %s", f.Timeout)
	case f.Signal != "":
		return "ended by " + f.Signal
	}
	return fmt.Sprintf("exit code %d", f.ExitCode)
}

// Markdown renders the failure for SUMMARY.md: a heading line, the facts,
// and the quoted lines in a fenced block.
func (f *Failure) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "### ✗ `%s`: %s\n\n", strings.ReplaceAll(f.Command, "`", "'"), f.Kind)
	if f.Phase != "" {
		fmt.Fprintf(&b, "- phase: %s\n", f.Phase)
	}
	b.WriteString("- " + f.ended(true) + "\n")
	if len(f.Pending) > 0 {
		fmt.Fprintf(&b, "- still waiting for: %s\n", assert.OneLine(strings.Join(f.Pending, ", ")))
	}
	if f.UsefulErrorMessage != "" {
		fmt.Fprintf(&b, "- usefulErrorMessage: %s\n", assert.OneLine(f.UsefulErrorMessage))
	}
	if len(f.Quoted) > 0 {
		b.WriteString("\n")
		assert.Fenced(&b, strings.Join(f.Quoted, "\n"), "")
	}
	return b.String()
}

// ending is how a command ended, as the Runner saw it.
type ending struct {
	Command  string
	ExitCode int
	Signal   string
	// TimedOut: the harness killed it at Timeout. Interrupted: the caller's
	// context was cancelled (Ctrl-C on the harness).
	TimedOut    bool
	Interrupted bool
	Timeout     time.Duration
	Phase       string
}

var (
	errorLineRE = regexp.MustCompile(`^(Error:|Failure while|.*\b(?:[Ee]rror|[Ff]ailed|failure)\b)`)

	providerWaitRE   = regexp.MustCompile(`Waiting for provider (\S+)`)
	providerPassedRE = regexp.MustCompile(`Passed waiting on provider (\S+)`)
	providerFailRE   = regexp.MustCompile(`(?i)(?:waiting for provider|provider components?).*(?:timed out|timeout|deadline exceeded)|(?:timed out|timeout).*waiting for provider`)

	packageWaitRE       = regexp.MustCompile(`waiting for resource (\S+) of type \*v1alpha1\.PackageInstall`)
	packageReconciledRE = regexp.MustCompile(`successfully reconciled package: '?([^'\s]+)'?`)
	packageFailRE       = regexp.MustCompile(`(?i)ReconcileFailed|reconcil(?:e|iation) failed|usefulErrorMessage`)
	usefulRE            = regexp.MustCompile(`usefulErrorMessage:?\s*['"]?(.*?)['"]?\s*$`)

	// What govmomi and the CLI print when vCenter refuses or cannot be
	// reached. Plain mentions of vSphere ("vSphere 7.0 Environment
	// Detected.") are not errors and do not match.
	vcenterRE = regexp.MustCompile(`(?i)incorrect user name or password|ServerFaultCode|NoPermission|Permission to perform this operation was denied|(?:cannot|unable to|failed to) (?:connect|login|log in) to (?:vCenter|vSphere)|(?:vCenter|vSphere|vc) (?:server )?(?:login|connection) (?:failed|error)|x509: certificate.*(?:vcenter|vsphere)`)
)

// classifier keeps what classification needs from a long output: the last
// lines, the lines that matched a failure pattern (bounded), and what the
// CLI started and finished waiting for.
type classifier struct {
	n        int // lines seen, to keep quoted lines in output order
	tail     []numbered
	matches  map[Kind][]numbered
	errLines []numbered

	providers, packages map[string]bool // name -> still pending
	useful              string
}

const (
	tailLines   = 12
	keepMatches = 6
	maxQuoted   = 1000
)

type numbered struct {
	n    int
	line string
}

func newClassifier() *classifier {
	return &classifier{matches: map[Kind][]numbered{}, providers: map[string]bool{}, packages: map[string]bool{}}
}

func keepLast(list []numbered, line numbered, n int) []numbered {
	list = append(list, line)
	if len(list) > n {
		list = append(list[:0], list[len(list)-n:]...)
	}
	return list
}

// line takes one redacted line.
func (c *classifier) line(line string) {
	_, msg := splitStamp(line)
	if msg == "" {
		return
	}
	c.n++
	// At -v 9 one line can be a whole YAML document; a quote needs its start.
	if len(line) > maxQuoted {
		line = line[:maxQuoted] + "…"
	}
	nl := numbered{c.n, line}
	c.tail = keepLast(c.tail, nl, tailLines)
	if m := providerWaitRE.FindStringSubmatch(msg); m != nil {
		c.pending(c.providers, "provider "+m[1], true)
	}
	if m := providerPassedRE.FindStringSubmatch(msg); m != nil {
		c.pending(c.providers, "provider "+m[1], false)
	}
	if m := packageWaitRE.FindStringSubmatch(msg); m != nil {
		c.pending(c.packages, "PackageInstall "+m[1], true)
	}
	if m := packageReconciledRE.FindStringSubmatch(msg); m != nil {
		c.pending(c.packages, "PackageInstall "+m[1], false)
	}
	switch {
	case providerFailRE.MatchString(msg):
		c.matches[KindProviderTimeout] = keepLast(c.matches[KindProviderTimeout], nl, keepMatches)
	case packageFailRE.MatchString(msg):
		c.matches[KindPackageReconcile] = keepLast(c.matches[KindPackageReconcile], nl, keepMatches)
		if m := usefulRE.FindStringSubmatch(msg); m != nil && m[1] != "" {
			c.useful = m[1]
		}
	case vcenterRE.MatchString(msg):
		c.matches[KindVCenter] = keepLast(c.matches[KindVCenter], nl, keepMatches)
	}
	if errorLineRE.MatchString(msg) && !strings.Contains(msg, "retrying") {
		c.errLines = keepLast(c.errLines, nl, keepMatches)
	}
}

func (c *classifier) pending(set map[string]bool, name string, waiting bool) { set[name] = waiting }

// stillPending is sorted: the CLI waits for providers and packages in
// parallel, and the order it printed them in says nothing.
func (c *classifier) stillPending(set map[string]bool) []string {
	var out []string
	for n, waiting := range set {
		if waiting {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// classify returns nil for a command that succeeded.
func (c *classifier) classify(e ending) *Failure {
	if e.ExitCode == 0 && e.Signal == "" && !e.TimedOut && !e.Interrupted {
		return nil
	}
	f := &Failure{Command: e.Command, ExitCode: e.ExitCode, Signal: e.Signal, Phase: e.Phase}
	switch {
	// How it ended comes first: a command the harness killed in a provider
	// wait is a timeout of the harness's budget, whatever it printed last.
	case e.TimedOut:
		f.Kind, f.Timeout = KindTimeout, e.Timeout
		f.Quoted = merge(c.tail)
		f.Pending = append(c.stillPending(c.providers), c.stillPending(c.packages)...)
	case e.Interrupted || e.Signal == "interrupt":
		f.Kind = KindInterrupted
		f.Quoted = merge(c.tail)
		f.Pending = append(c.stillPending(c.providers), c.stillPending(c.packages)...)
	case len(c.matches[KindProviderTimeout]) > 0:
		f.Kind = KindProviderTimeout
		f.Pending = c.stillPending(c.providers)
		f.Quoted = merge(c.matches[KindProviderTimeout], c.errLines)
	case len(c.matches[KindPackageReconcile]) > 0:
		f.Kind = KindPackageReconcile
		f.Pending = c.stillPending(c.packages)
		f.UsefulErrorMessage = c.useful
		f.Quoted = merge(c.matches[KindPackageReconcile], c.errLines)
	case len(c.matches[KindVCenter]) > 0:
		f.Kind = KindVCenter
		f.Quoted = merge(c.matches[KindVCenter], c.errLines)
	default:
		f.Kind = KindUnknown
		f.Quoted = merge(c.errLines)
		if len(f.Quoted) == 0 {
			f.Quoted = merge(c.tail)
		}
	}
	return f
}

// merge returns the lines of the lists once each, in output order.
func merge(lists ...[]numbered) []string {
	byN := map[int]string{}
	for _, l := range lists {
		for _, nl := range l {
			byN[nl.n] = nl.line
		}
	}
	ns := make([]int, 0, len(byN))
	for n := range byN {
		ns = append(ns, n)
	}
	sort.Ints(ns)
	out := make([]string, 0, len(ns))
	for _, n := range ns {
		out = append(out, byN[n])
	}
	return out
}
