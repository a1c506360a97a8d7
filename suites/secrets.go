package suites

import (
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/tkg-e2e/harness/framework/artifacts/leakcheck"
)

// runSecrets are the secret values this run handled: the config's, the
// simulator's password, and the credentials of every kubeconfig of the run.
func runSecrets(env *Env) []string {
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
// folder: every value in every rendering, and secret shapes (private keys,
// kubeconfig credentials, Secret data) left unmasked.
func scanArtifacts(env *Env) (findings []leakcheck.Finding, scanned int, err error) {
	if _, err := os.Stat(env.ArtifactFolder); err != nil {
		return nil, 0, nil
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
func (e *Env) rememberSecrets() {
	s := runSecrets(e)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.scanSecrets = s
}
