package tanzu

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/tkg-e2e/harness/framework/redact"

	"github.com/tkg-e2e/harness/framework/infrastructure"
)

// ConfigFileInput is the input of WriteConfigFile.
type ConfigFileInput struct {
	// Dir is where the file's private folder is made: the run's work folder
	// (beside the kubeconfigs, ~/.cache/tkg-e2e/<run>/), never the
	// artifacts folder.
	Dir string
	// ArtifactsDir is the run's artifacts folder; a Dir inside it is
	// refused, because the file holds the vCenter password in clear.
	ArtifactsDir string
	// Values are the TKG configuration variables (CLUSTER_NAME,
	// CLUSTER_PLAN, INFRASTRUCTURE_PROVIDER, VSPHERE_SERVER, ...), written
	// as the flat KEY: value YAML the CLI reads with --file.
	Values map[string]string
	// Redactor gets every secret value of the file registered (keys naming
	// a PASSWORD, SECRET or TOKEN), before the file exists: the CLI echoes
	// configuration values into its output. Required.
	Redactor *redact.Redactor
}

// requiredKeys are what every TKG cluster configuration file needs;
// vsphereKeys what INFRASTRUCTURE_PROVIDER: vsphere needs on top (the CLI
// would ask for them interactively, or fail late, after kind is up).
var (
	requiredKeys = []string{"CLUSTER_NAME", "CLUSTER_PLAN", "INFRASTRUCTURE_PROVIDER"}
	vsphereKeys  = []string{"VSPHERE_SERVER", "VSPHERE_USERNAME", "VSPHERE_PASSWORD", "VSPHERE_DATACENTER"}
	keyRE        = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
	secretKeyRE  = regexp.MustCompile(`PASSWORD|SECRET|TOKEN|PRIVATE_KEY`)
)

// IsSecretKey says whether a configuration variable holds a secret.
func IsSecretKey(key string) bool { return secretKeyRE.MatchString(key) }

func (in *ConfigFileInput) validate() error {
	var errs []string
	if in.Dir == "" {
		errs = append(errs, "Dir is required (the run's private work folder)")
	}
	if in.ArtifactsDir == "" {
		errs = append(errs, "ArtifactsDir is required (to keep the file out of it)")
	}
	if in.Dir != "" && in.ArtifactsDir != "" {
		if inside, err := within(in.Dir, in.ArtifactsDir); err != nil {
			errs = append(errs, err.Error())
		} else if inside {
			errs = append(errs, fmt.Sprintf("Dir %s is inside the artifacts folder %s: the file holds the vCenter password; use the run's work folder", in.Dir, in.ArtifactsDir))
		}
	}
	if in.Redactor == nil {
		errs = append(errs, "Redactor is required: the file's secrets must be masked in the CLI's output")
	}
	var missing, bad []string
	for _, k := range requiredKeys {
		if strings.TrimSpace(in.Values[k]) == "" {
			missing = append(missing, k)
		}
	}
	if infrastructure.Parse(strings.ToLower(in.Values["INFRASTRUCTURE_PROVIDER"])).NodesInVCenter() {
		for _, k := range vsphereKeys {
			if strings.TrimSpace(in.Values[k]) == "" {
				missing = append(missing, k)
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(in.Values)) {
		if !keyRE.MatchString(k) {
			bad = append(bad, fmt.Sprintf("%q", k))
		}
	}
	if len(missing) > 0 {
		errs = append(errs, "Values lack "+strings.Join(missing, ", "))
	}
	if len(bad) > 0 {
		errs = append(errs, "Values keys must be TKG variable names (A-Z, 0-9, _): "+strings.Join(bad, ", "))
	}
	if len(errs) > 0 {
		return fmt.Errorf("tanzu.WriteConfigFile: invalid input: %s", strings.Join(errs, "; "))
	}
	return nil
}

// within says whether dir is base or inside it, after resolving symlinks of
// the parts that exist (a work folder linked into the artifacts is inside).
func within(dir, base string) (bool, error) {
	d, err := resolve(dir)
	if err != nil {
		return false, err
	}
	b, err := resolve(base)
	if err != nil {
		return false, err
	}
	rel, err := filepath.Rel(b, d)
	if err != nil {
		return false, nil
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))), nil
}

// resolve makes path absolute and resolves symlinks in its longest
// existing prefix.
func resolve(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	rest := ""
	for p := abs; ; p = filepath.Dir(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest), nil
		}
		if filepath.Dir(p) == p {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}

// ConfigFile is a written cluster configuration file.
type ConfigFile struct {
	// Path is the file to pass as --file.
	Path string
	dir  string
}

// WriteConfigFile writes the cluster configuration file, mode 0600, in a
// private folder (0700) of its own under in.Dir, so that nothing that
// collects the work folder's other files picks it up by accident and
// Remove takes exactly what was written. Secret values are registered with
// the Redactor first.
func WriteConfigFile(in ConfigFileInput) (*ConfigFile, error) {
	if err := in.validate(); err != nil {
		return nil, err
	}
	for k, v := range in.Values {
		if IsSecretKey(k) {
			in.Redactor.Add(v)
		}
	}
	data, err := yaml.Marshal(in.Values) // flat, keys sorted
	if err != nil {
		return nil, fmt.Errorf("tanzu: cluster configuration: %w", err)
	}
	if err := os.MkdirAll(in.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("tanzu: cluster configuration: %w", err)
	}
	dir, err := os.MkdirTemp(in.Dir, "tanzu-config-")
	if err != nil {
		return nil, fmt.Errorf("tanzu: cluster configuration: %w", err)
	}
	path := filepath.Join(dir, in.Values["CLUSTER_NAME"]+".yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("tanzu: cluster configuration: %w", err)
	}
	return &ConfigFile{Path: path, dir: dir}, nil
}

// Remove deletes the file and its private folder. It is safe to call more
// than once, and on a nil ConfigFile.
func (c *ConfigFile) Remove() error {
	if c == nil || c.dir == "" {
		return nil
	}
	if err := os.RemoveAll(c.dir); err != nil {
		return fmt.Errorf("tanzu: removing the cluster configuration file: %w", err)
	}
	return nil
}
