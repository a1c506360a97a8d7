// Command standin behaves like the tanzu CLI for the commands the harness
// runs, by replaying transcripts cut from seed 000 (testdata/), so that the
// tanzu driver can be tested where the real CLI cannot be built or run.
//
//	tanzu management-cluster create --file F [-v N] [--yes]
//	tanzu cluster create [NAME] --file F [-v N]
//	tanzu cluster delete NAME [-n NAMESPACE] [--yes]
//	tanzu management-cluster delete [NAME] [--yes]
//	tanzu version
//
// Environment:
//
//	TANZU_STANDIN_SCENARIO   clean (default), provider-timeout, pkg-reconcile-fail, hang, echo-password;
//	                         a command without a transcript for the scenario replays its clean one
//	TANZU_STANDIN_SPEED      how many times faster than seed 000's timings to replay (default 1)
//	TANZU_STANDIN_KUBECONFIG the kubeconfig written where the CLI announces the bootstrap (and, unless
//	                         TANZU_STANDIN_MANAGEMENT_KUBECONFIG is set, the management) cluster's
//	TANZU_STANDIN_KIND_NAME  the kind cluster's name the CLI announces (default tkg-kind-<random>)
//	TANZU_STANDIN_CHILD_PIDFILE where the pid of the child process a transcript starts is written
//	TANZU_STANDIN_BACKEND    a program run at each #!backend ACTION line, which does for real what the
//	                         CLI does there (scripts/tanzu-standin-backend.sh: kind, clusterctl, kubectl),
//	                         with the configuration file's variables in its environment; unset, the
//	                         stand-in only replays (and the kubeconfigs must exist already)
//	HOME                     as for the CLI: kubeconfigs go to ~/.kube-tkg/tmp/ and ~/.kube/config,
//	                         which the stand-in refuses to overwrite (point HOME at a run-local folder)
//
// Exit codes are the CLI's: 0, 1 for an error; SIGINT ends it as it ends the
// CLI (by the signal) unless the transcript says the CLI is wedged
// (#!ignore-interrupt). Problems of the stand-in itself exit 2.
//
// Transcript directives (lines starting with #!): backend ACTION, kubeconfig bootstrap|management,
// rm-kubeconfig bootstrap, child, ignore-interrupt, hang, sleep SECONDS,
// stream stdout|stderr, exit CODE. Placeholders: {{CLUSTER_NAME}},
// {{KIND_NAME}} (tkg-kind-<random>, TANZU_STANDIN_KIND_NAME for the backend),
// {{BOOTSTRAP_KUBECONFIG}}, {{MANAGEMENT_KUBECONFIG}}, {{VSPHERE_SERVER}},
// {{VSPHERE_USERNAME}}, {{VSPHERE_PASSWORD}}.
package main

import (
	"bufio"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"sigs.k8s.io/yaml"
)

//go:embed testdata/*.txt
var transcripts embed.FS

// stateFile remembers the management cluster between commands, as the
// CLI's config does.
const stateFile = ".config/tanzu/standin-management-cluster"

type standin struct {
	home        string
	vars        map[string]string
	speed       float64
	out         io.Writer
	child       *exec.Cmd
	ignoreInt   bool
	bootstrapKC string
	mgmtKC      string
	kindName    string
}

func main() {
	s := &standin{out: os.Stdout, speed: 1, vars: map[string]string{}, kindName: os.Getenv("TANZU_STANDIN_KIND_NAME")}
	if s.kindName == "" {
		s.kindName = "tkg-kind-" + randomName(20)
	}
	code := s.run(os.Args[1:])
	s.stopChild()
	os.Exit(code)
}

func fail(format string, a ...any) int {
	fmt.Fprintf(os.Stderr, "standin: "+format+"\n", a...)
	return 2
}

func cliError(format string, a ...any) int {
	fmt.Fprintf(os.Stderr, "Error: "+format+"\n", a...)
	return 1
}

type flags struct {
	file, verbosity, namespace string
	yes                        bool
	args                       []string
}

func parseFlags(args []string) (flags, error) {
	var f flags
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(a, "=")
		value := func() (string, error) {
			if hasVal {
				return val, nil
			}
			if i+1 >= len(args) {
				return "", fmt.Errorf("flag needs an argument: %s", name)
			}
			i++
			return args[i], nil
		}
		var err error
		switch name {
		case "--file", "-f":
			f.file, err = value()
		case "-v", "--verbose":
			f.verbosity, err = value()
		case "--namespace", "-n":
			f.namespace, err = value()
		case "--tkr":
			_, err = value()
		case "--yes", "-y":
			f.yes = true
		case "--deploy-tkg-on-vSphere7":
		default:
			if strings.HasPrefix(a, "-") {
				return f, fmt.Errorf("unknown flag: %s", name)
			}
			f.args = append(f.args, a)
		}
		if err != nil {
			return f, err
		}
	}
	return f, nil
}

func (s *standin) run(args []string) int {
	if len(args) == 0 {
		return cliError("no command given")
	}
	if v := os.Getenv("TANZU_STANDIN_SPEED"); v != "" {
		sp, err := strconv.ParseFloat(v, 64)
		if err != nil || sp <= 0 {
			return fail("TANZU_STANDIN_SPEED=%q is not a positive number", v)
		}
		s.speed = sp
	}
	scenario := os.Getenv("TANZU_STANDIN_SCENARIO")
	if scenario == "" {
		scenario = "clean"
	}
	switch scenario {
	case "clean", "provider-timeout", "pkg-reconcile-fail", "hang", "echo-password":
	default:
		return fail("TANZU_STANDIN_SCENARIO=%q: want clean, provider-timeout, pkg-reconcile-fail, hang or echo-password", scenario)
	}
	// The CLI dies of SIGINT; it is handled here only so that the child
	// is not left behind by the stand-in itself (the harness kills the
	// group anyway), and so that a wedged transcript can ignore it.
	ints := make(chan os.Signal, 1)
	signal.Notify(ints, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		sig := <-ints
		s.stopChild()
		signal.Reset(sig.(syscall.Signal))
		_ = syscall.Kill(os.Getpid(), sig.(syscall.Signal))
	}()

	var cmd string
	var rest []string
	switch {
	case args[0] == "version":
		cmd, rest = "version", args[1:]
	case len(args) >= 2 && (args[0] == "management-cluster" || args[0] == "mc") && (args[1] == "create" || args[1] == "delete"):
		cmd, rest = "management-cluster-"+args[1], args[2:]
	case len(args) >= 2 && args[0] == "cluster" && (args[1] == "create" || args[1] == "delete"):
		cmd, rest = "cluster-"+args[1], args[2:]
	default:
		return cliError("unknown command %q for \"tanzu\"", strings.Join(args, " "))
	}
	f, err := parseFlags(rest)
	if err != nil {
		return cliError("%v", err)
	}
	if cmd != "version" {
		if s.home = os.Getenv("HOME"); s.home == "" {
			return fail("HOME is not set")
		}
	}
	switch cmd {
	case "management-cluster-create", "cluster-create":
		if f.file == "" {
			return cliError("required flag(s) \"file\" not set")
		}
		data, err := os.ReadFile(f.file)
		if err != nil {
			return cliError("unable to read cluster configuration file: %v", err)
		}
		if err := yaml.Unmarshal(data, &s.vars); err != nil {
			return cliError("unable to parse cluster configuration file %s: %v", f.file, err)
		}
		if cmd == "cluster-create" && len(f.args) > 0 {
			s.vars["CLUSTER_NAME"] = f.args[0]
		}
		if s.vars["CLUSTER_NAME"] == "" {
			return cliError("cluster name is required: set CLUSTER_NAME in %s", f.file)
		}
	case "cluster-delete":
		if len(f.args) != 1 {
			return cliError("accepts 1 arg(s), received %d", len(f.args))
		}
		s.vars["CLUSTER_NAME"] = f.args[0]
		s.vars["NAMESPACE"] = f.namespace
	case "management-cluster-delete":
		name, err := os.ReadFile(filepath.Join(s.home, stateFile))
		if err != nil {
			return cliError("unable to get current management cluster configuration: no management cluster is set")
		}
		s.vars["CLUSTER_NAME"] = strings.TrimSpace(string(name))
	}
	name := cmd + "-" + scenario + ".txt"
	text, err := transcripts.ReadFile("testdata/" + name)
	if errors.Is(err, os.ErrNotExist) {
		text, err = transcripts.ReadFile("testdata/" + cmd + "-clean.txt")
	}
	if err != nil {
		return fail("no transcript for %s: %v", name, err)
	}
	code := s.replay(string(text))
	if code == 0 {
		switch cmd {
		case "management-cluster-create":
			if err := writeFile(filepath.Join(s.home, stateFile), []byte(s.vars["CLUSTER_NAME"]+"\n")); err != nil {
				return fail("%v", err)
			}
		case "management-cluster-delete":
			_ = os.Remove(filepath.Join(s.home, stateFile))
			// The CLI drops the cluster's context from ~/.kube/config; the
			// stand-in wrote the whole file, so it removes it (only if it
			// is still what it wrote), and a later create in the same HOME
			// works.
			if err := removeManagementKubeconfig(s.home); err != nil {
				return fail("%v", err)
			}
		}
	}
	return code
}

var stampRE = regexp.MustCompile(`^\s*\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z)\]`)

// replay writes the transcript, waiting between stamped lines as long as
// the stamps say (divided by the speed), and runs its directives.
func (s *standin) replay(text string) int {
	var clock time.Time // the transcript's time, once a stamp set it
	sleep := func(d time.Duration) {
		if d > 0 {
			time.Sleep(time.Duration(float64(d) / s.speed))
		}
		if !clock.IsZero() {
			clock = clock.Add(d)
		}
	}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if d, ok := strings.CutPrefix(line, "#!"); ok {
			if code, stop := s.directive(strings.Fields(d), sleep); stop {
				return code
			}
			continue
		}
		if m := stampRE.FindStringSubmatch(line); m != nil {
			if t, err := time.Parse(time.RFC3339Nano, m[1]); err == nil {
				if !clock.IsZero() && t.After(clock) {
					sleep(t.Sub(clock))
				}
				if clock.IsZero() || t.After(clock) {
					clock = t
				}
			}
		}
		fmt.Fprintln(s.out, s.expand(line))
	}
	return 0
}

func (s *standin) expand(line string) string {
	if !strings.Contains(line, "{{") {
		return line
	}
	return strings.NewReplacer(
		"{{CLUSTER_NAME}}", s.vars["CLUSTER_NAME"],
		"{{KIND_NAME}}", s.kindName,
		"{{BOOTSTRAP_KUBECONFIG}}", s.bootstrapKC,
		"{{MANAGEMENT_KUBECONFIG}}", s.mgmtKC,
		"{{VSPHERE_SERVER}}", s.vars["VSPHERE_SERVER"],
		"{{VSPHERE_USERNAME}}", s.vars["VSPHERE_USERNAME"],
		"{{VSPHERE_PASSWORD}}", s.vars["VSPHERE_PASSWORD"],
	).Replace(line)
}

// directive runs one #! line; stop says the replay ends with code.
func (s *standin) directive(d []string, sleep func(time.Duration)) (code int, stop bool) {
	if len(d) == 0 {
		return fail("empty directive"), true
	}
	arg := ""
	if len(d) > 1 {
		arg = d[1]
	}
	switch d[0] {
	case "backend":
		if code := s.backend(arg); code != 0 {
			return code, true
		}
	case "kubeconfig":
		src := os.Getenv("TANZU_STANDIN_KUBECONFIG")
		if m := os.Getenv("TANZU_STANDIN_MANAGEMENT_KUBECONFIG"); arg == "management" && m != "" {
			src = m
		}
		if src == "" {
			return fail("TANZU_STANDIN_KUBECONFIG is not set: it names the kubeconfig the stand-in writes where the CLI announces one"), true
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return fail("TANZU_STANDIN_KUBECONFIG: %v", err), true
		}
		switch arg {
		case "bootstrap":
			s.bootstrapKC = filepath.Join(s.home, ".kube-tkg", "tmp", "config_"+randomSuffix())
			err = writeFile(s.bootstrapKC, data)
		case "management":
			s.mgmtKC = filepath.Join(s.home, ".kube", "config")
			if _, statErr := os.Stat(s.mgmtKC); statErr == nil {
				return fail("%s exists: the stand-in does not merge kubeconfigs as the CLI does; point HOME at a run-local folder", s.mgmtKC), true
			}
			err = writeFile(s.mgmtKC, data)
		default:
			return fail("kubeconfig %q: want bootstrap or management", arg), true
		}
		if err != nil {
			return fail("%v", err), true
		}
	case "rm-kubeconfig":
		// The CLI deletes the kind cluster, and its kubeconfig with it.
		if s.bootstrapKC != "" {
			_ = os.Remove(s.bootstrapKC)
		}
	case "child":
		// A process of the CLI's own (as kind and kubectl are), holding the
		// output pipe: the harness must stop it with the CLI.
		c := exec.Command("sleep", "600")
		c.Stdout, c.Stderr = os.Stdout, os.Stderr
		if err := c.Start(); err != nil {
			return fail("starting a child: %v", err), true
		}
		s.child = c
		if p := os.Getenv("TANZU_STANDIN_CHILD_PIDFILE"); p != "" {
			if err := writeFile(p, []byte(strconv.Itoa(c.Process.Pid)+"\n")); err != nil {
				return fail("%v", err), true
			}
		}
	case "ignore-interrupt":
		// A wedged CLI: SIGINT does nothing, to it or to the children it
		// starts from now on (an ignored signal stays ignored across exec).
		signal.Ignore(syscall.SIGINT)
		s.ignoreInt = true
	case "hang":
		for {
			time.Sleep(time.Hour)
		}
	case "sleep":
		sec, err := strconv.ParseFloat(arg, 64)
		if err != nil {
			return fail("sleep %q: %v", arg, err), true
		}
		sleep(time.Duration(sec * float64(time.Second)))
	case "stream":
		switch arg {
		case "stdout":
			s.out = os.Stdout
		case "stderr":
			s.out = os.Stderr
		default:
			return fail("stream %q: want stdout or stderr", arg), true
		}
	case "exit":
		n, err := strconv.Atoi(arg)
		if err != nil {
			return fail("exit %q: %v", arg, err), true
		}
		return n, true
	default:
		return fail("unknown directive %q", d[0]), true
	}
	return 0, false
}

// backend runs TANZU_STANDIN_BACKEND ACTION, its output in the CLI's
// (each line marked, so nobody mistakes it for seed 000's), the
// configuration file's variables in its environment. It is in the
// stand-in's process group: a timeout or Ctrl-C of the CLI stops it too.
// A failure ends the command as the CLI ends one, with exit 1.
func (s *standin) backend(action string) int {
	prog := os.Getenv("TANZU_STANDIN_BACKEND")
	if prog == "" {
		return 0
	}
	if action == "" {
		return fail("backend: no action")
	}
	c := exec.Command(prog, action)
	c.Env = append(os.Environ(), "TANZU_STANDIN_KIND_NAME="+s.kindName)
	for k, v := range s.vars {
		c.Env = append(c.Env, k+"="+v)
	}
	pr, pw := io.Pipe()
	c.Stdout, c.Stderr = pw, pw
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			fmt.Fprintln(s.out, "standin-backend "+action+": "+sc.Text())
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	err := c.Run()
	_ = pw.Close()
	<-done
	if err != nil {
		return cliError("unable to set up %s: standin backend %s: %v", s.vars["CLUSTER_NAME"], action, err)
	}
	return 0
}

func (s *standin) stopChild() {
	if s.child != nil && s.child.Process != nil {
		_ = s.child.Process.Kill()
		_ = s.child.Wait()
	}
}

func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

// randomName is n characters of [a-z0-9], as the CLI names its kind cluster.
func randomName(n int) string {
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = letters[int(b[i])%len(letters)]
	}
	return string(b)
}

func randomSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func removeManagementKubeconfig(home string) error {
	path := filepath.Join(home, ".kube", "config")
	have, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	for _, env := range []string{"TANZU_STANDIN_MANAGEMENT_KUBECONFIG", "TANZU_STANDIN_KUBECONFIG"} {
		if src := os.Getenv(env); src != "" {
			if want, err := os.ReadFile(src); err == nil && string(want) == string(have) {
				return os.Remove(path)
			}
		}
	}
	return nil
}
