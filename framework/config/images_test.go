package config

import (
	"strings"
	"testing"
)

func TestImageRolesFilterAndUnknownRoleNamesLine(t *testing.T) {
	with := func(images string) func(string) string {
		return replace("images:\n  - name: busybox:1.35.0\n", "images:\n"+images)
	}
	cfg, ps := load(t, fixture(t, with("  - {name: capi, roles: [bootstrap, management]}\n  - {name: kapp, roles: [management, workload]}\n  - {name: all}\n")), nil)
	if ps != nil {
		t.Fatalf("unexpected problems:\n%s", ps.Error())
	}
	for role, want := range map[string]string{"bootstrap": "capi all", "management": "capi kapp all", "workload": "kapp all"} {
		var got []string
		for _, im := range cfg.Images {
			if im.ForRole(role) {
				got = append(got, im.Name)
			}
		}
		if strings.Join(got, " ") != want {
			t.Errorf("images for %s: %v, want %s", role, got, want)
		}
	}
	_, ps = load(t, fixture(t, with("  - {name: a, roles: [workload, kind]}\n")), nil)
	pr := expectProblem(t, ps, "images[0].roles", `unknown role "kind"`, "bootstrap, management, workload")
	if pr.Line == 0 {
		t.Errorf("the problem has no line: %+v", pr)
	}
}
