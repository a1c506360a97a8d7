package config

import (
	"slices"
	"strings"
	"testing"
)

// withLease adds a lease section and makes the vCenter server a variable,
// as config/vsphere.yaml writes it.
func withLease(lease string) func(string) string {
	return func(s string) string {
		s = strings.Replace(s, "vsphere:\n", "vsphere:\n  server: ${VSPHERE_SERVER}\n", 1)
		return s + "\nlease:\n" + lease
	}
}

func TestLeaseDefersUnsetVariablesUntilLeased(t *testing.T) {
	p := fixture(t, withLease("  url: ${BOSKOS_URL}\n"))
	// Before the lease: VSPHERE_SERVER is expected from it, not a problem.
	cfg, ps := load(t, p, map[string]string{"BOSKOS_URL": "http://boskos:8080"})
	if ps != nil {
		t.Fatalf("unexpected problems: %v", ps)
	}
	if !slices.Equal(cfg.DeferredVariables, []string{"VSPHERE_SERVER"}) {
		t.Errorf("DeferredVariables = %v", cfg.DeferredVariables)
	}
	if cfg.Lease.Type != "vsphere-testbed" || cfg.Lease.HeartbeatDuration().String() != "30s" {
		t.Errorf("defaults not applied: %+v", cfg.Lease)
	}
	// The lease's values win over the environment, as an overrides file's would.
	cfg, err := Load(LoadOptions{Path: p, LookupEnv: env(map[string]string{"BOSKOS_URL": "http://boskos:8080", "VSPHERE_SERVER": "env.example"}),
		Intervals: testIntervals, LeaseValues: map[string]string{"VSPHERE_SERVER": "leased.example"}})
	if err != nil || cfg.VSphere.Server != "leased.example" {
		t.Fatalf("with lease values: server %q, err %v", cfg.VSphere.Server, err)
	}
	// Leased, a variable its user data lacks is a problem again.
	_, err = Load(LoadOptions{Path: p, LookupEnv: env(map[string]string{"BOSKOS_URL": "http://boskos:8080"}),
		Intervals: testIntervals, LeaseValues: map[string]string{}})
	if err == nil || !strings.Contains(err.Error(), "variable VSPHERE_SERVER is not set") {
		t.Fatalf("want VSPHERE_SERVER unset after the lease, got %v", err)
	}
}

func TestLeaseSectionProblemsAreNotDeferred(t *testing.T) {
	p := fixture(t, withLease("  url: ${BOSKOS_URL}\n  heartbeat: soon\n  secretKeys: [\"not a name\"]\n"))
	_, ps := load(t, p, nil)
	expectProblem(t, ps, "lease.url", "BOSKOS_URL is not set")
	expectProblem(t, ps, "lease.heartbeat", `"soon" is not a positive duration`)
	expectProblem(t, ps, "lease.secretKeys[0]", "not a variable name")
}

func TestLeaseValuesTakeSecretsOnlyWhenListed(t *testing.T) {
	l := &Lease{SecretKeys: []string{"VSPHERE_PASSWORD"}}
	vars, secretKeys, ignored := l.LeaseValues(map[string]string{
		"VSPHERE_SERVER": "vc.example", "VSPHERE_PASSWORD": "s3cret-pw", "GITHUB_TOKEN": "tok-123456",
		"tkg-e2e-dirty-reason": "x",
	})
	if vars["VSPHERE_SERVER"] != "vc.example" || vars["VSPHERE_PASSWORD"] != "s3cret-pw" {
		t.Errorf("vars = %v", vars)
	}
	if _, ok := vars["GITHUB_TOKEN"]; ok {
		t.Error("a secret-named key that secretKeys does not list was used")
	}
	if _, ok := vars["tkg-e2e-dirty-reason"]; ok {
		t.Error("a key that is not a variable name was used")
	}
	if !slices.Equal(secretKeys, []string{"VSPHERE_PASSWORD"}) {
		t.Errorf("secretKeys = %v", secretKeys)
	}
	if len(ignored) != 1 || !strings.HasPrefix(ignored[0], "GITHUB_TOKEN") {
		t.Errorf("ignored = %v", ignored)
	}
}
