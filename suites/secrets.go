package suites

import (
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/tkg-e2e/harness/framework/artifacts/leakcheck"
)

// Env key of secret values the run handled that are not in the config (the
// vcsim password), for the final leak scan.
const envRunSecrets = "run.secrets"

// envScanSecrets holds runSecrets as they were before cleanup.
const envScanSecrets = "run.secrets.beforeCleanup"

func (e *Env) addRunSecret(v string) {
	cur, _ := e.Get(envRunSecrets)
	list, _ := cur.([]string)
	e.Set(envRunSecrets, append(list, v))
}

// runSecrets are the secret values this run handled: the config's, the
// simulator's password, and the credentials of every kubeconfig of the run.
func runSecrets(env *Env) []string {
	var out []string
	if env.Config != nil {
		out = append(out, env.Config.Secrets()...)
	}
	if v, ok := env.Get(envRunSecrets); ok {
		out = append(out, v.([]string)...)
	}
	if env.State == nil {
		return out
	}
	files, _ := filepath.Glob(filepath.Join(KubeconfigDir(env), "*.kubeconfig"))
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
	if v, ok := env.Get(envScanSecrets); ok {
		// Taken before cleanup removed the kubeconfigs.
		secrets = append(secrets, v.([]string)...)
	}
	findings, err = leakcheck.Dir(env.ArtifactFolder, secrets...)
	return findings, len(secrets), err
}
