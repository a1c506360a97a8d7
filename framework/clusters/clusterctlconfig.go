package clusters

import (
	"fmt"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// WriteClusterctlConfig writes a run-local clusterctl config file: the base
// file's content (provider repositories, cert-manager URL; may be empty) with
// vars added as top-level variables, which is where clusterctl reads
// template variables from. vars may hold the vCenter password, so the file
// is 0600 and belongs outside the artifacts folder. clusterctl still lets an
// exported environment variable of the same name win.
func WriteClusterctlConfig(path, base string, vars map[string]string) error {
	doc := map[string]any{}
	if base != "" {
		b, err := os.ReadFile(base)
		if err != nil {
			return fmt.Errorf("reading the clusterctl config %s: %w (point clusterctl.configPath at a readable clusterctl.yaml)", base, err)
		}
		if err := yaml.Unmarshal(b, &doc); err != nil {
			return fmt.Errorf("the clusterctl config %s is not YAML: %w", base, err)
		}
		if doc == nil {
			doc = map[string]any{}
		}
	}
	for k, v := range vars {
		doc[k] = v
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".clusterctl-*.yaml")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(out); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
