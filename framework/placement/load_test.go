package placement

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tkg-e2e/harness/framework/assert"
)

const validMatrix = `
name: test
roles: [management, workload]
defaults:
  readiness: {maxRestarts: 3}
components:
- name: capi-controller-manager
  namespace: capi-system
  match: {deployment: capi-controller-manager}
  roles: {management: must, workload: mustNot}
- name: kapp-controller
  namespaces: [kapp-controller, tkg-system]
  match: {deployment: kapp-controller}
  roles: {management: must, workload: must}
  readiness: {maxRestarts: 10}
`

func TestParseValid(t *testing.T) {
	m, err := Parse([]byte(validMatrix), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "test" || len(m.Components) != 2 || len(m.Roles) != 2 {
		t.Fatalf("unexpected matrix: %+v", m)
	}
	kc := m.Components[1]
	if got := kc.NamespaceList(); len(got) != 2 || got[1] != "tkg-system" {
		t.Errorf("namespaces = %v", got)
	}
	if ready, max := m.effectiveReadiness(kc); !ready || max == nil || *max != 10 {
		t.Errorf("kapp-controller readiness = %v %v, want true 10 (row overrides default)", ready, max)
	}
	if _, max := m.effectiveReadiness(m.Components[0]); max == nil || *max != 3 {
		t.Errorf("capi readiness maxRestarts = %v, want the default 3", max)
	}
}

// Every strictness rule must name the file, the row and the offending key,
// so the person editing the YAML knows where to look.
func TestParseRejectsBadInput(t *testing.T) {
	cases := []struct {
		name, yaml string
		want       []string
	}{
		{"unknown top-level key", strings.Replace(validMatrix, "name: test", "name: test\nrole: [x]", 1),
			[]string{"bad.yaml", `unknown key "role"`, "roles"}},
		{"unknown row key", strings.Replace(validMatrix, "  namespace: capi-system", "  namespce: capi-system", 1),
			[]string{"bad.yaml: components[0]", `unknown key "namespce"`, "namespace"}},
		{"unknown match key", strings.Replace(validMatrix, "{deployment: capi-controller-manager}", "{deploy: capi-controller-manager}", 1),
			[]string{"components[0] (capi-controller-manager).match", `unknown key "deploy"`, "deployment"}},
		{"unknown readiness key", strings.Replace(validMatrix, "{maxRestarts: 10}", "{maxRestart: 10}", 1),
			[]string{"components[1] (kapp-controller).readiness", `unknown key "maxRestart"`}},
		{"unknown defaults key", strings.Replace(validMatrix, "readiness: {maxRestarts: 3}", "readyness: {maxRestarts: 3}", 1),
			[]string{"bad.yaml: defaults", `unknown key "readyness"`}},
		{"unknown role in row", strings.Replace(validMatrix, "{management: must, workload: mustNot}", "{management: must, workload: mustNot, windows: must}", 1),
			[]string{"components[0] (capi-controller-manager)", `unknown key "windows"`}},
		{"missing role in row", strings.Replace(validMatrix, "{management: must, workload: mustNot}", "{management: must}", 1),
			[]string{"components[0] (capi-controller-manager)", `no expectation for role "workload"`}},
		{"bad expectation", strings.Replace(validMatrix, "workload: mustNot}", "workload: never}", 1),
			[]string{"roles.workload", `unknown expectation "never"`, "mustNot"}},
		{"unknown matrix role", strings.Replace(validMatrix, "[management, workload]", "[management, edge]", 1),
			[]string{`unknown role "edge"`}},
		{"two match fields", strings.Replace(validMatrix, "{deployment: kapp-controller}", "{deployment: kapp-controller, namePrefix: kapp}", 1),
			[]string{"components[1] (kapp-controller): match: set exactly one", "got 2"}},
		{"namespace and namespaces", strings.Replace(validMatrix, "  namespaces: [kapp-controller, tkg-system]", "  namespace: x\n  namespaces: [kapp-controller, tkg-system]", 1),
			[]string{"set namespace or namespaces, not both"}},
		{"duplicate YAML key", strings.Replace(validMatrix, "  namespace: capi-system", "  namespace: capi-system\n  namespace: other", 1),
			[]string{"bad.yaml: not valid YAML", "namespace"}},
		{"duplicate component", validMatrix + `- name: kapp-controller
  namespace: x
  match: {deployment: x}
  roles: {management: must, workload: must}
`, []string{`name "kapp-controller" already used by components[1]`}},
		{"negative budget", strings.Replace(validMatrix, "{maxRestarts: 10}", "{maxRestarts: -1}", 1),
			[]string{"maxRestarts must be >= 0"}},
		{"wrong type", strings.Replace(validMatrix, "[kapp-controller, tkg-system]", "kapp-controller", 1),
			[]string{"components[1]", `"namespaces"`, "want a list"}},
		{"unlisted is no expectation of a file", strings.Replace(validMatrix, "workload: mustNot}", "workload: unlisted}", 1),
			[]string{"roles.workload", `unknown expectation "unlisted"`}},
		// Lines: validMatrix starts with an empty line, so "name: test" is line 2.
		{"systemNamespaces not a list", strings.Replace(validMatrix, "name: test", "name: test\nsystemNamespaces: monitoring", 1),
			[]string{"bad.yaml:3: systemNamespaces: want a list of namespaces, found the string \"monitoring\"", "systemNamespaces: [monitoring]"}},
		{"systemNamespaces entry empty, repeated, not a name", strings.Replace(validMatrix, "name: test",
			"name: test\nsystemNamespaces:\n- monitoring\n- \"\"\n- monitoring\n- Logging\n- {name: x}\n- 42\n-", 1),
			[]string{"bad.yaml:5: systemNamespaces[1]: empty namespace name (write the namespace, or remove the entry)",
				`bad.yaml:6: systemNamespaces[2]: namespace "monitoring" already listed on line 4 (remove one)`,
				`bad.yaml:7: systemNamespaces[3]: "Logging" is not a namespace name`,
				"bad.yaml:8: systemNamespaces[4]: want a namespace name, found a mapping (write one name per entry",
				"bad.yaml:9: systemNamespaces[5]: want a namespace name, found int 42 (quote it if it really is the name)",
				"bad.yaml:10: systemNamespaces[6]: empty namespace name"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml), "bad.yaml")
			if err == nil {
				t.Fatal("Parse accepted bad input")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not mention %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestParseSystemNamespaces(t *testing.T) {
	m, err := Parse([]byte(strings.Replace(validMatrix, "name: test", "name: test\nsystemNamespaces: [monitoring, logging]", 1)), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(m.SystemNamespaces, ","); got != "monitoring,logging" {
		t.Errorf("systemNamespaces = %s", got)
	}
	// Built in, named by a row, and listed: each once.
	if got := strings.Join(m.SystemNamespaceList(), ","); got != "capi-system,kapp-controller,kube-system,logging,monitoring,tkg-system" {
		t.Errorf("SystemNamespaceList = %s", got)
	}
	for _, y := range []string{validMatrix, strings.Replace(validMatrix, "name: test", "name: test\nsystemNamespaces:", 1),
		strings.Replace(validMatrix, "name: test", "name: test\nsystemNamespaces: []", 1)} {
		if m, err := Parse([]byte(y), "test.yaml"); err != nil || len(m.SystemNamespaces) != 0 {
			t.Errorf("an absent or empty systemNamespaces adds nothing: %v %v", m, err)
		}
	}
}

func TestParseReportsAllProblemsAtOnce(t *testing.T) {
	bad := strings.Replace(validMatrix, "namespace: capi-system", "namespce: capi-system", 1)
	bad = strings.Replace(bad, "{deployment: kapp-controller}", "{}", 1)
	_, err := Parse([]byte(bad), "bad.yaml")
	if err == nil || !strings.Contains(err.Error(), "namespce") || !strings.Contains(err.Error(), "components[1] (kapp-controller): match: set exactly one") {
		t.Fatalf("want both problems reported, got: %v", err)
	}
}

// The shipped matrices must load: a typo there would only show up in a run.
func TestShippedMatricesLoad(t *testing.T) {
	files, err := filepath.Glob("../../config/placement/*.yaml")
	if err != nil || len(files) < 2 {
		t.Fatalf("want the shipped matrices in config/placement, got %v (%v)", files, err)
	}
	for _, f := range files {
		m, err := Load(f)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		t.Logf("%s: %d components, roles %v", f, len(m.Components), m.Roles)
	}
}

func TestShippedLocalMatrixRules(t *testing.T) {
	m, err := Load("../../config/placement/local.yaml")
	if err != nil {
		t.Fatal(err)
	}
	mgmtOnly := []string{"capi-controller-manager", "capi-kubeadm-bootstrap-controller-manager",
		"capi-kubeadm-control-plane-controller-manager", "capd-controller-manager",
		"cert-manager", "cert-manager-cainjector", "cert-manager-webhook"}
	for _, c := range m.Components {
		for _, name := range mgmtOnly {
			if c.Name == name && (c.Roles[assert.Management] != Must || c.Roles[assert.Workload] != MustNot) {
				t.Errorf("%s: want must on management, mustNot on workload, got %v", name, c.Roles)
			}
		}
		// Controllers must not assume a node role: the management control plane is tainted.
		if c.Match.StaticPod == "" && (c.Roles[assert.Management] == ControlPlaneOnly || c.Roles[assert.Workload] == ControlPlaneOnly) {
			t.Errorf("%s: controlPlaneOnly on a non-static pod", c.Name)
		}
	}
}
