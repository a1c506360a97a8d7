package packages

import (
	"path/filepath"
	"strings"
	"testing"
)

const validList = `
name: test
roles:
  management:
  - {name: tkg-pkg, namespace: tkg-system}
  - {name: "${CLUSTER_NAME}-antrea", namespace: tkg-system, packageRef: antrea.tanzu.vmware.com, version: ">=1.7.2"}
  workload:
  - {name: "${CLUSTER_NAME}-kapp-controller", namespace: "${CLUSTER_NAMESPACE}", location: management}
  - {name: "${CLUSTER_NAME}-pinniped", namespace: tkg-system, optional: true}
`

func TestParseListAndExpand(t *testing.T) {
	l, err := Parse([]byte(validList), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got, err := l.For("workload", map[string]string{"CLUSTER_NAME": "tkg-vc-antrea", "CLUSTER_NAMESPACE": "default"})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Name != "tkg-vc-antrea-kapp-controller" || got[0].Namespace != "default" || got[0].Location != OnManagement {
		t.Errorf("entry 0 = %+v", got[0])
	}
	if got[1].Location != OnSelf || !got[1].Optional {
		t.Errorf("entry 1 = %+v (location defaults to self)", got[1])
	}
	// For must not change the loaded list.
	if l.Roles["workload"][0].Name != "${CLUSTER_NAME}-kapp-controller" {
		t.Errorf("For modified the list")
	}
}

func TestForRejectsMissingValuesAndRoles(t *testing.T) {
	l, err := Parse([]byte(validList), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.For("workload", map[string]string{"CLUSTER_NAME": "wl"}); err == nil || !strings.Contains(err.Error(), "no value for ${CLUSTER_NAMESPACE}") {
		t.Errorf("err = %v", err)
	}
	if _, err := l.For("windows-workload", nil); err == nil || !strings.Contains(err.Error(), `no entries for role "windows-workload"`) {
		t.Errorf("err = %v", err)
	}
	if got, err := l.For("management", map[string]string{"CLUSTER_NAME": "mgmt"}); err != nil || got[1].Name != "mgmt-antrea" {
		t.Errorf("management: %v %v", got, err)
	}
}

func TestParseListRejectsBadInput(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"unknown top key", strings.Replace(validList, "name: test", "name: test\nrole: x", 1), `bad.yaml: unknown key "role"`},
		{"unknown entry key", strings.Replace(validList, "{name: tkg-pkg, namespace: tkg-system}", "{name: tkg-pkg, namespace: tkg-system, versoin: x}", 1),
			`bad.yaml: roles.management[0]: unknown key "versoin" (known keys: location, name, namespace, note, optional, packageRef, version)`},
		{"unknown role", strings.Replace(validList, "  workload:", "  workloads:", 1), `roles: unknown key "workloads"`},
		{"unknown placeholder", strings.Replace(validList, "${CLUSTER_NAMESPACE}", "${NAMESPACE}", 1), "unknown placeholder ${NAMESPACE}"},
		{"bad constraint", strings.Replace(validList, ">=1.7.2", "at least 1.7", 1), `version: "at least 1.7" is not a semver constraint`},
		{"bad location", strings.Replace(validList, "location: management", "location: mgmt", 1), `location: "mgmt" is not a location`},
		{"missing namespace", strings.Replace(validList, "{name: tkg-pkg, namespace: tkg-system}", "{name: tkg-pkg}", 1), "roles.management[0] (tkg-pkg): namespace is required"},
		{"duplicate", strings.Replace(validList, "  workload:", "  - {name: tkg-pkg, namespace: tkg-system}\n  workload:", 1), "listed twice"},
		{"duplicate YAML key", strings.Replace(validList, "name: test", "name: test\nname: again", 1), "not valid YAML"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml), "bad.yaml")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want error containing %q, got: %v", tc.want, err)
			}
		})
	}
}

func TestShippedListsLoad(t *testing.T) {
	files, _ := filepath.Glob("../../config/packages/*.yaml")
	if len(files) < 2 {
		t.Fatalf("want the shipped lists in config/packages, got %v", files)
	}
	for _, f := range files {
		l, err := Load(f)
		if err != nil {
			t.Error(err)
			continue
		}
		for role := range l.Roles {
			if _, err := l.For(role, map[string]string{"CLUSTER_NAME": "c", "CLUSTER_NAMESPACE": "ns"}); err != nil {
				t.Error(err)
			}
		}
	}
}

// local.yaml is what the harness checks after InstallSamplePackages: the two
// must name the same PackageInstalls.
func TestLocalListMatchesSampleSet(t *testing.T) {
	l, err := Load("../../config/packages/local.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{"management", "workload"} {
		got, err := l.For(role, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := SampleInstalls()
		if len(got) != len(want) {
			t.Fatalf("%s: %d entries, sample set has %d", role, len(got), len(want))
		}
		for i, w := range want {
			g := got[i]
			if g.Name != w.Name || g.Namespace != SampleNamespace || g.PackageRef != w.RefName || g.Version != w.Version {
				t.Errorf("%s[%d] = %+v, sample install %+v in %s", role, i, g, w, SampleNamespace)
			}
		}
	}
}

func TestTKGWorkloadKappControllerLivesOnManagement(t *testing.T) {
	l, err := Load("../../config/packages/tkg-vsphere.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got, err := l.For("workload", map[string]string{"CLUSTER_NAME": "tkg-vc-antrea", "CLUSTER_NAMESPACE": "default"})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]Expected{}
	for _, e := range got {
		names[e.Name] = e
	}
	kc := names["tkg-vc-antrea-kapp-controller"]
	if kc.Location != OnManagement || kc.Namespace != "default" {
		t.Errorf("kapp-controller entry = %+v (seed 000: in namespace 'default' of the management cluster)", kc)
	}
	for _, n := range []string{"tkg-vc-antrea-antrea", "tkg-vc-antrea-vsphere-csi", "tkg-vc-antrea-vsphere-cpi"} {
		if e, ok := names[n]; !ok || e.Namespace != "tkg-system" || e.Location != OnSelf {
			t.Errorf("%s = %+v, want it in tkg-system of the workload cluster", n, e)
		}
	}
}
