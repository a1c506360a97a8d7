package tanzu

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tkg-e2e/harness/framework/redact"
)

// RunInput is the input of Run.
type RunInput struct {
	// CLI is the tanzu binary to run (the caller resolves the profile's
	// tanzu.cli or TANZU_CLI).
	CLI  string
	Args []string
	// Env is added to the harness's environment (a later entry wins), e.g.
	// HOME for a run-local ~/.kube-tkg and ~/.config/tanzu.
	Env []string
	// Dir is the command's working directory; empty: the harness's.
	Dir string
	// Transcript is the file the output goes to (created, or truncated),
	// line by line through Redactor as it arrives, so a hang or a crash of
	// the harness still leaves what was printed. Required.
	Transcript string
	// Redactor masks secrets in the transcript, the lines handed to
	// Progress and the hooks, and the Result (the config file's secrets
	// are registered by WriteConfigFile). Required.
	Redactor *redact.Redactor
	// Timeout bounds the whole command; at it, and when ctx is cancelled,
	// the command's process group gets SIGINT and, KillGrace later,
	// SIGKILL.
	Timeout   time.Duration
	KillGrace time.Duration
	// Progress, if set, gets every line (redacted) as it arrives.
	Progress func(line string)
	Hooks    Hooks
}

func (in *RunInput) validate() error {
	var errs []string
	if in.CLI == "" {
		errs = append(errs, "CLI is required (set tanzu.cli in the profile or TANZU_CLI)")
	} else if st, err := os.Stat(in.CLI); err != nil {
		errs = append(errs, fmt.Sprintf("CLI %s: %v (set tanzu.cli in the profile or TANZU_CLI to the tanzu binary)", in.CLI, err))
	} else if st.IsDir() || st.Mode()&0o111 == 0 {
		errs = append(errs, fmt.Sprintf("CLI %s is not an executable file", in.CLI))
	}
	if len(in.Args) == 0 {
		errs = append(errs, "Args are required (e.g. ManagementClusterCreateArgs)")
	}
	if in.Transcript == "" {
		errs = append(errs, "Transcript is required (a file in the artifacts folder)")
	}
	if in.Redactor == nil {
		errs = append(errs, "Redactor is required: the CLI echoes configuration values, the vCenter password among them")
	}
	if in.Timeout <= 0 || in.KillGrace <= 0 {
		errs = append(errs, fmt.Sprintf("Timeout and KillGrace must be > 0 (got %s and %s)", in.Timeout, in.KillGrace))
	}
	for _, kv := range in.Env {
		if !strings.Contains(kv, "=") {
			errs = append(errs, fmt.Sprintf("Env entry %q is not KEY=value", in.Redactor.String(kv)))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("tanzu.Run: invalid input: %s", strings.Join(errs, "; "))
	}
	return nil
}

// Result of Run. Every string in it is redacted.
type Result struct {
	Command string `json:"command"`
	// PID is the CLI's process id, and its process group's.
	PID      int           `json:"pid"`
	Start    time.Time     `json:"start"`
	End      time.Time     `json:"end"`
	Duration time.Duration `json:"duration"`
	// ExitCode is the exit status; -1 when a signal ended the command
	// (Signal names it).
	ExitCode int     `json:"exitCode"`
	Signal   string  `json:"signal,omitempty"`
	Phases   []Phase `json:"phases"`
	// Kubeconfigs the CLI announced, and the workload cluster it named.
	BootstrapKubeconfig  string `json:"bootstrapKubeconfig,omitempty"`
	ManagementKubeconfig string `json:"managementKubeconfig,omitempty"`
	ClusterName          string `json:"clusterName,omitempty"`
	// Completed: the CLI printed its success line.
	Completed bool `json:"completed"`
	// Failure is nil when the command succeeded.
	Failure *Failure `json:"failure,omitempty"`
}

// Run runs the tanzu CLI once. The command runs in a process group of its
// own, so that the kind, kubectl or plugin processes it starts are stopped
// with it; and so that a Ctrl-C on the harness's terminal reaches the
// harness only, which then stops the command through ctx. Whatever is left
// of the group when the command exits is killed: a run leaves nothing
// behind.
//
// A command that fails (non-zero exit, timeout, cancelled ctx) returns the
// Result and its *Failure as the error. Other errors (bad input, a
// transcript that cannot be written, a CLI that cannot start) return a nil
// Result or one without Failure.
func Run(ctx context.Context, in RunInput) (*Result, error) {
	if err := in.validate(); err != nil {
		return nil, err
	}
	red := in.Redactor
	command := red.String(strings.Join(append([]string{"tanzu"}, in.Args...), " "))

	if err := os.MkdirAll(filepath.Dir(in.Transcript), 0o700); err != nil {
		return nil, fmt.Errorf("tanzu: transcript of %s: %w", command, err)
	}
	tf, err := os.OpenFile(in.Transcript, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("tanzu: transcript of %s: %w", command, err)
	}
	defer tf.Close()
	transcript := red.Writer(tf)

	// One pipe for stdout and stderr: the CLI interleaves its log (stderr)
	// and its messages (stdout), and the transcript must keep that order.
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("tanzu: %w", err)
	}
	cmd := exec.Command(in.CLI, in.Args...)
	cmd.Dir = in.Dir
	cmd.Env = append(os.Environ(), in.Env...)
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}

	res := &Result{Command: command, Start: time.Now()}
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return nil, fmt.Errorf("tanzu: cannot start %s: %w", command, err)
	}
	pw.Close() // the children hold the write end now
	pgid := cmd.Process.Pid
	res.PID = pgid

	parser := NewParser(res.Start, in.Dir, in.Hooks)
	cls := newClassifier()
	readDone := make(chan error, 1)
	go func() {
		// A transcript that cannot be written (disk full) is reported, but
		// the parsing, the hooks and the classification go on: the stage
		// still needs its clusters and its verdict.
		var writeErr error
		readErr := readLines(pr, func(at time.Time, raw string) error {
			if _, err := io.WriteString(transcript, raw+"\n"); err != nil && writeErr == nil {
				writeErr = fmt.Errorf("tanzu: writing transcript %s: %w", in.Transcript, err)
			}
			line := red.String(raw)
			parser.Line(at, line)
			cls.line(line)
			if in.Progress != nil {
				in.Progress(line)
			}
			return nil
		})
		readDone <- errors.Join(writeErr, readErr)
	}()

	exited := make(chan struct{})
	go func() {
		// The exit status is read from cmd.ProcessState.
		_ = cmd.Wait()
		close(exited)
	}()

	timer := time.NewTimer(in.Timeout)
	defer timer.Stop()
	var timedOut, interrupted bool
	select {
	case <-exited:
	case <-timer.C:
		timedOut = true
	case <-ctx.Done():
		// A deadline on ctx is a timeout as much as our own.
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			timedOut = true
		} else {
			interrupted = true
		}
	}
	if timedOut || interrupted {
		stopGroup(pgid, exited, in.KillGrace)
	}
	<-exited
	// Whatever the command left in its group (a kubectl it started and did
	// not wait for) goes with it.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)

	// The output ends when the last writer is gone; one that left the group
	// (setsid) could hold the pipe for ever, so the wait is bounded.
	var readErr error
	select {
	case readErr = <-readDone:
	case <-time.After(in.KillGrace):
		pr.Close()
		readErr = <-readDone
	}
	pr.Close()
	if err := transcript.Flush(); err != nil && readErr == nil {
		readErr = fmt.Errorf("tanzu: writing transcript %s: %w", in.Transcript, err)
	}

	res.End = time.Now()
	res.Duration = res.End.Sub(res.Start)
	res.ExitCode, res.Signal = exitStatus(cmd.ProcessState)
	phase := parser.Current()
	res.Phases = parser.Finish(res.End)
	res.BootstrapKubeconfig = parser.BootstrapKubeconfig
	res.ManagementKubeconfig = parser.ManagementKubeconfig
	res.ClusterName = parser.ClusterName
	res.Completed = parser.Completed
	res.Failure = cls.classify(ending{Command: command, ExitCode: res.ExitCode, Signal: res.Signal,
		TimedOut: timedOut, Interrupted: interrupted, Timeout: in.Timeout, Phase: phase})
	if res.Failure != nil {
		if readErr != nil {
			return res, errors.Join(res.Failure, readErr)
		}
		return res, res.Failure
	}
	return res, readErr
}

// stopGroup asks the group to stop (SIGINT, what Ctrl-C sends, so the CLI
// can clean up as it does for a user) and kills it when the leader has not
// exited after grace.
func stopGroup(pgid int, exited <-chan struct{}, grace time.Duration) {
	_ = syscall.Kill(-pgid, syscall.SIGINT)
	select {
	case <-exited:
	case <-time.After(grace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

func exitStatus(ps *os.ProcessState) (int, string) {
	if ps == nil {
		return -1, ""
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, ws.Signal().String()
	}
	return ps.ExitCode(), ""
}

// readLines calls fn for each line of r, without its line ending, with the
// time it was read. Reading runs apart from fn, so that a slow fn
// (redaction, a hook) does not delay the stamps of the lines queued behind
// it: a phase's timing is when the CLI printed its marker, within the
// pipe's latency. Lines are not length-limited: the CLI prints whole YAML
// documents on one line at -v 9, and a cut line could split a secret.
func readLines(r io.Reader, fn func(at time.Time, line string) error) error {
	type stamped struct {
		at   time.Time
		line string
	}
	lines := make(chan stamped, 4096)
	readErr := make(chan error, 1)
	go func() {
		defer close(lines)
		br := bufio.NewReaderSize(r, 64<<10)
		for {
			s, err := br.ReadString('\n')
			if s != "" {
				lines <- stamped{time.Now(), strings.TrimRight(s, "\r\n")}
			}
			if err != nil {
				// Closed: Run stopped waiting for a writer that left the group.
				if errors.Is(err, io.EOF) || errors.Is(err, os.ErrClosed) {
					err = nil
				}
				readErr <- err
				return
			}
		}
	}()
	var sticky error
	for l := range lines {
		if sticky == nil {
			sticky = fn(l.at, l.line)
		}
	}
	if err := <-readErr; sticky == nil {
		sticky = err
	}
	return sticky
}
