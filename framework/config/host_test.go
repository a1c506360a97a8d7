package config

import "testing"

// host.diskPerNodeGiB: unset takes the measured default, 0 turns the check
// off, and a negative number is a problem at its line.
func TestHostDiskPerNode(t *testing.T) {
	cfg, ps := load(t, fixture(t, func(s string) string { return s }), nil)
	if ps != nil || cfg.Host.DiskPerNode() != DefaultDiskPerNodeGiB {
		t.Fatalf("unset: %v, %v", ps, cfg.Host.DiskPerNode())
	}
	cfg, ps = load(t, fixture(t, func(s string) string { return s + "\nhost:\n  diskPerNodeGiB: 0\n" }), nil)
	if ps != nil || cfg.Host.DiskPerNode() != 0 {
		t.Fatalf("0: %v, %v", ps, cfg.Host.DiskPerNode())
	}
	_, ps = load(t, fixture(t, func(s string) string { return s + "\nhost:\n  diskPerNodeGiB: -1\n" }), nil)
	if p := expectProblem(t, ps, "host.diskPerNodeGiB", "-1 is not a node's disk in GiB"); p.Line == 0 {
		t.Errorf("no line for %v", p)
	}
}
