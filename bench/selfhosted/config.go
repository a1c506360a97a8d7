// Package selfhosted runs Cluster API's own SelfHostedSpec
// (sigs.k8s.io/cluster-api/test/e2e, v1.14.0) on the offline testbed kit, with
// the suite setup of Cluster API's e2e suite (e2e_suite_test.go) done through
// its framework: a local clusterctl repository, a kind bootstrap cluster with
// the images loaded, `clusterctl init`, the spec, the teardown.
// scripts/bench-selfhosted.sh times it against `make e2e FOCUS=move`.
//
// This file holds what the kit needs beyond Cluster API's suite: rendering the
// E2EConfig template from the environment, and the cert-manager stanza that
// clusterctl.CreateRepository does not write.
package selfhosted

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

// varRef is ${NAME} or ${NAME:-default}.
var varRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// RenderConfig expands ${NAME} and ${NAME:-default} in the E2EConfig template
// src from lookup (os.LookupEnv) and writes the result to dst:
// clusterctl.LoadE2EConfig reads the file as it is. As in the shell and in
// config/local.yaml, the default applies when NAME is unset or empty; a
// ${NAME} without a default that is unset or empty is an error naming every
// such variable. Whole-line comments are copied unchanged.
func RenderConfig(src, dst string, lookup func(string) (string, bool)) error {
	in, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	missing := map[string]bool{}
	var order []string
	sc := bufio.NewScanner(bytes.NewReader(in))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			line = varRef.ReplaceAllStringFunc(line, func(ref string) string {
				m := varRef.FindStringSubmatch(ref)
				if v, ok := lookup(m[1]); ok && v != "" {
					return v
				}
				if m[2] != "" {
					return m[3]
				}
				if !missing[m[1]] {
					missing[m[1]] = true
					order = append(order, m[1])
				}
				return ref
			})
		}
		out.WriteString(line)
		out.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if len(order) > 0 {
		return fmt.Errorf("%s: unset: %s (source the kit's env.sh: . /var/cache/testbed/out/env.sh)", src, strings.Join(order, ", "))
	}
	return os.WriteFile(dst, out.Bytes(), 0o600)
}

// CopyCertManager copies the cert-manager stanza (url, version, timeout) of
// the clusterctl config from into the clusterctl config to.
// clusterctl.CreateRepository writes providers, overridesFolder and the
// E2EConfig's variables only, so without it `clusterctl init` would fetch
// cert-manager from its release URL (no network here); the kit's
// clusterctl.yaml, which `make e2e` uses, points at the kit's manifest.
func CopyCertManager(from, to string) error {
	src, err := readYAMLMap(from)
	if err != nil {
		return err
	}
	cm, ok := src["cert-manager"].(map[string]interface{})
	if !ok || cm["url"] == nil {
		return fmt.Errorf("%s has no cert-manager.url: clusterctl init would fetch cert-manager from the internet", from)
	}
	dst, err := readYAMLMap(to)
	if err != nil {
		return err
	}
	dst["cert-manager"] = cm
	data, err := yaml.Marshal(dst)
	if err != nil {
		return err
	}
	return os.WriteFile(to, data, 0o600)
}

func readYAMLMap(path string) (map[string]interface{}, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := map[string]interface{}{}
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}
