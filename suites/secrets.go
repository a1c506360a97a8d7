package suites

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tkg-e2e/harness/framework/artifacts/leakcheck"
	"github.com/tkg-e2e/harness/framework/redact"
)

// ProtectSecrets puts every channel of the run behind the Env's redactor:
// the state file is masked before each write; Gomega failures are masked
// before Ginkgo records them (so JUnit, reports and Ginkgo's own output
// never carry a secret an error quoted); and the process's stdout and
// stderr, with every child that inherits them, klog and Ginkgo's reporter,
// go through the redactor line by line. Call it once the Env is built, and
// defer RestoreOutput after RunSpecs so the last lines are written.
func ProtectSecrets(env *Env) error {
	if err := env.Validate(); err != nil {
		return err
	}
	gomega.RegisterFailHandler(maskedFail(env.Redactor, Fail))
	if err := env.State.SetRedactor(env.Redactor.String); err != nil {
		return fmt.Errorf("cannot write the state file: %w", err)
	}
	stdio.mu.Lock()
	defer stdio.mu.Unlock()
	if stdio.s != nil {
		return nil
	}
	s, err := redact.RedirectStdio(env.Redactor)
	if err != nil {
		return err
	}
	stdio.s = s
	return nil
}

// RestoreOutput writes what the output redirect still buffers and gives the
// process its real stdout and stderr back. It is a no-op without ProtectSecrets.
func RestoreOutput() error {
	stdio.mu.Lock()
	defer stdio.mu.Unlock()
	err := stdio.s.Restore()
	stdio.s = nil
	return err
}

var stdio struct {
	mu sync.Mutex
	s  *redact.Stdio
}

// maskedFail is fail (Ginkgo's Fail) with the message masked.
func maskedFail(r *redact.Redactor, fail func(string, ...int)) func(string, ...int) {
	return func(message string, callerSkip ...int) {
		skip := 1
		if len(callerSkip) > 0 {
			skip += callerSkip[0]
		}
		fail(r.String(message), skip)
	}
}

// failf fails the current node with a masked message.
func failf(env *Run, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if env != nil && env.Redactor != nil {
		msg = env.Redactor.String(msg)
	}
	Fail(msg, 1)
}

// runSecrets are the secret values this run handled: the config's, the
// simulator's password, and the credentials of every kubeconfig of the run.
func runSecrets(env *Run) []string {
	var out []string
	if env.Config != nil {
		out = append(out, env.Config.Secrets()...)
	}
	env.mu.Lock()
	out = append(out, env.runSecrets...)
	env.mu.Unlock()
	if env.KubeconfigDir == "" {
		return out
	}
	files, _ := filepath.Glob(filepath.Join(env.KubeconfigDir, "*.kubeconfig"))
	for _, f := range files {
		cfg, err := clientcmd.LoadFromFile(f)
		if err != nil {
			continue
		}
		for _, a := range cfg.AuthInfos {
			for _, v := range []string{string(a.ClientKeyData), a.Token, a.Password} {
				if v != "" {
					out = append(out, v)
				}
			}
		}
	}
	return out
}

// scanArtifacts proves no secret the run handled reached the artifacts
// folder: every value, found in whatever escaping or encoding it took (the
// scan decodes them itself, independently of the redactor), and secret
// shapes (private keys, kubeconfig credentials, Secret data) left unmasked.
// A folder or file it cannot read is an error: the run is not proven clean.
func scanArtifacts(env *Run) (findings []leakcheck.Finding, scanned int, err error) {
	if env.ArtifactFolder == "" {
		return nil, 0, errors.New("the run has no artifacts folder to scan")
	}
	secrets := runSecrets(env)
	env.mu.Lock()
	// Taken before cleanup removed the kubeconfigs.
	secrets = append(secrets, env.scanSecrets...)
	env.mu.Unlock()
	findings, err = leakcheck.Dir(env.ArtifactFolder, secrets...)
	return findings, len(secrets), err
}

// rememberSecrets keeps the run's secrets as they are before cleanup removes
// the kubeconfigs that hold some of them, for the final scan.
func (r *Run) rememberSecrets() {
	s := runSecrets(r)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.scanSecrets = s
}

// scanFailure is the message of a secret scan that found leaks or could not
// read everything; either fails the run.
func scanFailure(folder string, leaks []leakcheck.Finding, err error) string {
	var b strings.Builder
	if len(leaks) > 0 {
		fmt.Fprintf(&b, "secrets reached the artifacts folder (%d places):\n", len(leaks))
		for _, l := range leaks {
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	if err != nil {
		fmt.Fprintf(&b, "the secret scan of %s could not read everything, so the run is not proven free of leaks:\n  %v\n"+
			"Fix: make every file and folder under it readable by the user running the suite (chmod -R u+rwX), or remove what is not an artifact.", folder, err)
	}
	return strings.TrimRight(b.String(), "\n")
}
