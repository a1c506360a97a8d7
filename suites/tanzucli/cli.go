package tanzucli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/tkg-e2e/harness/framework/redact"
	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/framework/tanzu"
	"github.com/tkg-e2e/harness/suites"
)

// CLI is the run's tanzu CLI: the binary, the run-local HOME it runs
// with, and where its transcripts go. tanzucli.CLIOf builds it from the
// profile; the stages and the cleanup run every command through Run.
type CLI struct {
	// CLI is the tanzu binary (tanzu.cli or TANZU_CLI).
	CLI string
	// Home is the CLI's HOME: it writes ~/.kube-tkg, ~/.config/tanzu and
	// merges into ~/.kube/config, which must be the run's, not the user's.
	// It lives beside the kubeconfigs, outside the artifacts (it holds keys).
	Home string
	// WorkDir holds the transcripts as they are written (redacted already),
	// and the cluster configuration files (0600, removed after each command).
	WorkDir string
	// ArtifactFolder is the run's artifacts folder: configuration files are
	// refused inside it; transcripts are copied into its tanzu/ folder.
	ArtifactFolder string
	Verbosity      int
	KillGrace      time.Duration
	Redactor       *redact.Redactor
	Out            io.Writer
	// CopyArtifact copies a finished transcript into the artifacts (rel is
	// relative to the artifacts folder); WriteArtifactJSON writes the
	// command's Result beside it. Nil in tests that check the work folder.
	CopyArtifact      func(rel, src string) error
	WriteArtifactJSON func(rel string, v any) error
	// Env is added to the CLI's environment after HOME.
	Env []string
	// ProgressEvery is how often a running command says how long it has
	// run, its last phase and its last line (the poll of the interval
	// management/tanzu-create); 0: only when phases end.
	ProgressEvery time.Duration
}

// CLI returns the run's tanzu CLI, or an error when the profile's
// driver is not tanzu.
func CLIOf(e *suites.Env) (*CLI, error) {
	if e.Config == nil || !e.Config.UsesTanzu() {
		return nil, errors.New("the profile's driver is not tanzu: set driver: tanzu and tanzu.cli (or TANZU_CLI)")
	}
	t := &CLI{CLI: e.Config.Tanzu.CLI, Home: filepath.Join(e.KubeconfigDir, "tanzu-home"),
		WorkDir: filepath.Join(e.KubeconfigDir, "tanzu"), ArtifactFolder: e.ArtifactFolder,
		Verbosity: e.Config.Tanzu.Verbosity, KillGrace: e.Config.Tanzu.KillGraceDuration(), Redactor: e.Redactor, Out: e.Out,
		ProgressEvery: e.Interval("management", "tanzu-create").Poll}
	t.CopyArtifact = func(rel, src string) error {
		w, err := e.ArtifactWriter(e.ArtifactFolder)
		if err != nil {
			return err
		}
		return w.CopyFile(rel, src)
	}
	t.WriteArtifactJSON = func(rel string, v any) error {
		w, err := e.ArtifactWriter(e.ArtifactFolder)
		if err != nil {
			return err
		}
		return w.WriteJSON(rel, v)
	}
	// The CLI finds its plugins under XDG_DATA_HOME (~/.local/share/tanzu-cli):
	// with HOME moved, point it at the user's, so the plugins the user
	// installed are the ones that run.
	if _, set := os.LookupEnv("XDG_DATA_HOME"); !set {
		if home, err := os.UserHomeDir(); err == nil {
			t.Env = append(t.Env, "XDG_DATA_HOME="+filepath.Join(home, ".local", "share"))
		}
	}
	return t, nil
}

// deleteHint is what a person runs to do a command by hand, with the
// run's HOME (the CLI knows the management cluster from it).
func (t *CLI) deleteHint(args []string) string {
	s := "HOME=" + t.Home + " " + t.CLI
	for _, a := range args {
		s += " " + a
	}
	return s
}

// TanzuCommandError is a tanzu command that failed: its classified
// Failure, rendered as Markdown so the stage's failure message (and
// SUMMARY.md, which quotes it) shows the kind, the phase and the lines that
// matter, and where the whole transcript is.
type TanzuCommandError struct {
	Failure *tanzu.Failure
	// Transcript is the transcript's path relative to the artifacts folder.
	Transcript string
	err        error
}

// Error is the failure's one line (the stages table and the classifier read
// a message's first line), then its Markdown.
func (e *TanzuCommandError) Error() string {
	s := e.Failure.Error() + "\n\n" + e.Failure.Markdown()
	if e.Transcript != "" {
		s += "\nThe whole transcript: " + e.Transcript + " in the artifacts folder.\n"
	}
	// Errors beside the failure (a transcript that could not be written).
	var others []string
	for _, x := range unjoin(e.err) {
		if !errors.Is(x, e.Failure) {
			others = append(others, x.Error())
		}
	}
	for _, o := range others {
		s += "\nalso: " + o
	}
	return s
}

func (e *TanzuCommandError) Unwrap() error { return e.err }

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	if err == nil {
		return nil
	}
	return []error{err}
}

// configFile writes one command's cluster configuration file (0600, in
// WorkDir, refused inside the artifacts); remove deletes it when the
// command is done, saying so if it cannot.
func (t *CLI) configFile(values map[string]string, prefix string) (cf *tanzu.ConfigFile, remove func(), err error) {
	cf, err = tanzu.WriteConfigFile(tanzu.ConfigFileInput{Dir: t.WorkDir, ArtifactsDir: t.ArtifactFolder, Values: values, Redactor: t.Redactor})
	if err != nil {
		return nil, nil, err
	}
	return cf, func() {
		if err := cf.Remove(); err != nil {
			fmt.Fprintf(t.Out, "%s %v\n", prefix, err)
		}
	}, nil
}

// Run runs one tanzu command, its transcript named name (tanzu/<name>.log
// in the artifacts, copied there however the command ended), with the
// phases printed as they end. A failed command's error is a
// *TanzuCommandError.
func (t *CLI) Run(ctx context.Context, name string, args []string, timeout time.Duration, hooks tanzu.Hooks, prefix string) (*tanzu.Result, error) {
	if err := os.MkdirAll(t.Home, 0o700); err != nil {
		return nil, fmt.Errorf("tanzu: the CLI's HOME: %w", err)
	}
	transcript := filepath.Join(t.WorkDir, "transcripts", name+".log")
	rel := filepath.Join("tanzu", name+".log")
	var mu sync.Mutex
	lastPhase, lastLine := "none yet", ""
	onPhase := hooks.OnPhase
	hooks.OnPhase = func(p tanzu.Phase) {
		fmt.Fprintf(t.Out, "%s tanzu phase %-22s %6.1fs\n", prefix, p.Name, p.Duration.Seconds())
		mu.Lock()
		lastPhase = p.Name
		mu.Unlock()
		if onPhase != nil {
			onPhase(p)
		}
	}
	fmt.Fprintf(t.Out, "%s running %s (transcript: %s)\n", prefix, t.Redactor.String(t.deleteHint(args)), rel)
	start := time.Now()
	stop := make(chan struct{})
	if t.ProgressEvery > 0 {
		// A CLI phase can take many minutes without a marker (the control
		// plane coming up): say what it is doing meanwhile.
		go func() {
			tick := time.NewTicker(t.ProgressEvery)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					mu.Lock()
					ph, ln := lastPhase, lastLine
					mu.Unlock()
					fmt.Fprintf(t.Out, "%s tanzu %s: running for %s (timeout %s); last phase ended: %s; last line: %s\n",
						prefix, args[0], time.Since(start).Round(time.Second), timeout, ph, cut(ln, 160))
				}
			}
		}()
	}
	res, err := tanzu.Run(ctx, tanzu.RunInput{CLI: t.CLI, Args: args, Env: append([]string{"HOME=" + t.Home}, t.Env...),
		Transcript: transcript, Redactor: t.Redactor, Timeout: timeout, KillGrace: t.KillGrace, Hooks: hooks,
		Progress: func(line string) {
			if strings.TrimSpace(line) == "" {
				return
			}
			mu.Lock()
			lastLine = line
			mu.Unlock()
		}})
	close(stop)
	if res == nil {
		return nil, err
	}
	// The transcript on disk is redacted already; the copy is capped and
	// listed with the other artifacts.
	if t.CopyArtifact != nil {
		if cerr := t.CopyArtifact(rel, transcript); cerr != nil {
			fmt.Fprintf(t.Out, "%s copying the transcript into the artifacts: %v\n", prefix, cerr)
		}
	}
	if t.WriteArtifactJSON != nil {
		if jerr := t.WriteArtifactJSON(filepath.Join("tanzu", name+".result.json"), res); jerr != nil {
			fmt.Fprintf(t.Out, "%s writing the command's result into the artifacts: %v\n", prefix, jerr)
		}
	}
	if res.Failure != nil {
		return res, &TanzuCommandError{Failure: res.Failure, Transcript: rel, err: err}
	}
	return res, err
}

// cut shortens a line for a progress message.
func cut(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// reportPhases reports a command's phases (or some of them) as the
// stage's timed steps: report entries (JUnit), the progress lines, and the
// run state's steps of the stage (timings.json).
func reportPhases(env *suites.Env, stage string, res *tanzu.Result, phases []tanzu.Phase) {
	suites.StepEntries(env, stage, phaseSteps(phases))
	// Named by the command without its flags: the --file path is random
	// per run, and a JUnit name that changes every run has no history.
	name, _, _ := strings.Cut(res.Command, " -")
	AddReportEntry(name+" (phases)", phaseTable(res))
	if err := recordPhases(env.Run, stage, phases); err != nil {
		env.Printf("[%s] %v", stage, err)
	}
}

// recordPhases records phases as the stage's steps in the run state.
func recordPhases(env *suites.Run, stage string, phases []tanzu.Phase) error {
	steps := make([]run.StepTiming, 0, len(phases))
	for _, p := range phases {
		steps = append(steps, run.StepTiming{Name: "tanzu/" + p.Name, Started: p.Start.UTC(),
			Seconds: p.Duration.Round(time.Millisecond).Seconds()})
	}
	return env.State.SetStageSteps(stage, steps)
}

// phaseSteps are a command's phases as a stage's timed steps (StepEntries),
// named tanzu/<phase>.
func phaseSteps(ps []tanzu.Phase) []suites.Step {
	out := make([]suites.Step, 0, len(ps))
	for _, p := range ps {
		out = append(out, suites.Step{Name: "tanzu/" + p.Name, Duration: p.Duration})
	}
	return out
}
