package suites_test

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/tkg-e2e/harness/framework/capvtest"
	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/suites/lifecycle"
)

// capvTemplate returns the default cluster template of the pinned CAPV
// release.
func capvTemplate(t *testing.T) string {
	return string(capvtest.Template(t, "cluster-template.yaml"))
}

// requiredVariables are the ${VAR} references of a clusterctl template that
// have no ${VAR:=default}.
func requiredVariables(tmpl string) []string {
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile(`\$\{([A-Z0-9_]+)(:?=[^}]*)?\}`).FindAllStringSubmatch(tmpl, -1) {
		if m[2] == "" {
			seen[m[1]] = true
		}
	}
	var out []string
	for v := range seen {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

func loadVSphere(t *testing.T, env map[string]string) (*config.Config, error) {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
	return config.Load(config.LoadOptions{Path: "../config/vsphere.yaml", Intervals: lifecycle.Registry.IntervalKeys(),
		DriverIntervals: lifecycle.Registry.DriverIntervalKeys()})
}

func siteEnv(t *testing.T) map[string]string {
	cni := filepath.Join(t.TempDir(), "cni.yaml")
	if err := os.WriteFile(cni, []byte("kind: List\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"VSPHERE_SERVER": "vcenter.example.com", "VSPHERE_USERNAME": "administrator@vsphere.local",
		"VSPHERE_PASSWORD": "a-long-enough-password", "VSPHERE_TLS_THUMBPRINT": "AA:BB",
		"VSPHERE_DATACENTER": "/dc0", "VSPHERE_FOLDER": "/dc0/vm/e2e", "VSPHERE_DATASTORE": "ds0",
		"VSPHERE_RESOURCE_POOL": "/dc0/host/c0/Resources", "VSPHERE_NETWORK": "VM Network",
		"VSPHERE_SSH_AUTHORIZED_KEY": "ssh-ed25519 AAAAC3 e2e", "OVA_UBUNTU": "https://example.com/u.ova",
		"OVA_UBUNTU_SHA256":                    strings.Repeat("a", 64),
		"MANAGEMENT_CONTROL_PLANE_ENDPOINT_IP": "10.0.0.50", "WORKLOAD_CONTROL_PLANE_ENDPOINT_IP": "10.0.0.51",
		"CNI_MANIFEST": cni,
	}
}

// Every variable CAPV's pinned default template needs is supplied by the
// vSphere profile for both cluster roles (or by clusterctl from the cluster
// spec), so `clusterctl generate cluster` never stops on an unset one an hour
// into a nightly.
func TestVSphereProfileSuppliesEveryCAPVTemplateVariable(t *testing.T) {
	need := requiredVariables(capvTemplate(t))
	if len(need) < 15 {
		t.Fatalf("read only %d required variables from CAPV's template (%v): the parser or the template changed", len(need), need)
	}
	cfg, err := loadVSphere(t, siteEnv(t))
	if err != nil {
		t.Fatalf("config/vsphere.yaml with a complete site does not load:\n%v", err)
	}
	for _, role := range []string{"management", "workload"} {
		have := cfg.ClusterctlVariables(role)
		for _, v := range config.ClusterctlFills() {
			have[v] = "(clusterctl)"
		}
		for _, v := range need {
			if _, ok := have[v]; !ok {
				t.Errorf("%s cluster: CAPV's template needs %s and the vSphere profile does not supply it", role, v)
			}
		}
		if have["VSPHERE_TEMPLATE"] != "ubuntu-2204-kube-v1.33.1" {
			t.Errorf("%s cluster: VSPHERE_TEMPLATE = %q, want the template the ova stage imports", role, have["VSPHERE_TEMPLATE"])
		}
	}
	if m, w := cfg.ClusterctlVariables("management")["CONTROL_PLANE_ENDPOINT_IP"], cfg.ClusterctlVariables("workload")["CONTROL_PLANE_ENDPOINT_IP"]; m == w {
		t.Errorf("management and workload share CONTROL_PLANE_ENDPOINT_IP %s", m)
	}
}

// A variable the template needs and the site leaves unset is named by the
// config validation, before anything runs.
func TestVSphereProfileNamesUnsetCAPVVariables(t *testing.T) {
	for _, unset := range []string{"VSPHERE_SSH_AUTHORIZED_KEY", "WORKLOAD_CONTROL_PLANE_ENDPOINT_IP", "CNI_MANIFEST", "VSPHERE_DATASTORE"} {
		t.Run(unset, func(t *testing.T) {
			env := siteEnv(t)
			delete(env, unset)
			os.Unsetenv(unset)
			_, err := loadVSphere(t, env)
			if err == nil || !strings.Contains(err.Error(), unset) {
				t.Fatalf("with %s unset, want a config error naming it, got: %v", unset, err)
			}
			// Every problem says where: a file, even for a key no file sets.
			for _, line := range strings.Split(err.Error(), "\n") {
				if strings.Contains(line, ". : ") || strings.HasPrefix(strings.TrimSpace(line), ": ") {
					t.Errorf("a problem without a file: %q", line)
				}
			}
		})
	}
}
