package config

import (
	"strings"
	"testing"
)

func TestRunNamesCarryTheShortIDUnlessTurnedOff(t *testing.T) {
	cfg, ps := load(t, fixture(t, nil), nil)
	if ps != nil {
		t.Fatal(ps)
	}
	if !cfg.UniqueNames() {
		t.Fatal("uniqueNames must default to true")
	}
	if err := cfg.SetRunNames("k3f9a", nil); err != nil {
		t.Fatal(err)
	}
	c := cfg.Clusters
	if c.Bootstrap.Name != "kind-k3f9a" || c.Management.Name != "mgmt-k3f9a" || c.Workload.Name != "wl-k3f9a" {
		t.Fatalf("names %s %s %s", c.Bootstrap.Name, c.Management.Name, c.Workload.Name)
	}
	// A second call (or a name that already carries it) adds nothing.
	if err := cfg.SetRunNames("k3f9a", nil); err != nil || cfg.Clusters.Management.Name != "mgmt-k3f9a" {
		t.Fatalf("%v %s", err, cfg.Clusters.Management.Name)
	}

	// Resume: the kept run's names win, whatever the profile says now.
	cfg, _ = load(t, fixture(t, nil), nil)
	if err := cfg.SetRunNames("zzzzz", map[string]string{"management": "mgmt-k3f9a"}); err != nil {
		t.Fatal(err)
	}
	if cfg.Clusters.Management.Name != "mgmt-k3f9a" || cfg.Clusters.Workload.Name != "wl-zzzzz" {
		t.Fatalf("resume names %s %s", cfg.Clusters.Management.Name, cfg.Clusters.Workload.Name)
	}

	// Turned off from the environment, as scripts/test-concurrent-runs.sh does.
	p := fixture(t, replace("clusters:\n", "clusters:\n  uniqueNames: ${UNIQUE_CLUSTER_NAMES:-true}\n"))
	cfg, ps = load(t, p, map[string]string{"UNIQUE_CLUSTER_NAMES": "false"})
	if ps != nil {
		t.Fatal(ps)
	}
	if cfg.UniqueNames() {
		t.Fatal("uniqueNames: false ignored")
	}
	if err := cfg.SetRunNames("k3f9a", nil); err != nil || cfg.Clusters.Management.Name != "mgmt" {
		t.Fatalf("%v %s", err, cfg.Clusters.Management.Name)
	}
	if cfg, ps = load(t, p, nil); ps != nil || !cfg.UniqueNames() {
		t.Fatalf("default through the variable: %v", ps)
	}
}

func TestNameTooLongForTheRunSuffixHasFileAndLine(t *testing.T) {
	long := strings.Repeat("m", 34)
	_, ps := load(t, fixture(t, replace("name: mgmt", "name: "+long)), nil)
	pr := expectProblem(t, ps, "clusters.management.name", "34 characters", "uniqueNames: false")
	if !strings.Contains(pr.String(), "profile.yaml:") {
		t.Fatalf("no file:line: %s", pr)
	}
	// As written, 34 characters are fine.
	both := func(s string) string {
		return replace("clusters:\n", "clusters:\n  uniqueNames: false\n")(replace("name: mgmt", "name: "+long)(s))
	}
	if _, ps := load(t, fixture(t, both), nil); ps != nil {
		t.Fatal(ps)
	}
}
