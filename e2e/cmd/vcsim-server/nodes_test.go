package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/vmware/govmomi/vim25/types"
)

func extra(kv ...string) []types.BaseOptionValue {
	var out []types.BaseOptionValue
	for i := 0; i < len(kv); i += 2 {
		out = append(out, &types.OptionValue{Key: kv[i], Value: kv[i+1]})
	}
	return out
}

func value(t *testing.T, ev []types.BaseOptionValue, key string) string {
	t.Helper()
	for _, o := range ev {
		if o.GetOptionValue().Key == key {
			return o.GetOptionValue().Value.(string)
		}
	}
	return ""
}

func TestNodeVMsGetWhatANodeContainerNeedsOthersOnlyTheLabelAndNetwork(t *testing.T) {
	vc := vmContainers{Network: "tkg-e2e-sim-1", NodeImages: []string{"localhost/node:v1"}, Label: "run1"}
	got := vc.complete("mgmt-abc-x1", extra("RUN.container", `["localhost/node:v1"]`, "guestinfo.userdata", "e30="))
	var args []string
	if err := json.Unmarshal([]byte(value(t, got, "RUN.container")), &args); err != nil || len(args) != 1 {
		t.Fatalf("RUN.container = %q (%v)", value(t, got, "RUN.container"), err)
	}
	for _, want := range []string{"--label tkg-e2e.vcsim=run1", "--privileged", "--hostname mgmt-abc-x1", "--stop-signal SIGRTMIN+3", "--tmpfs /run", "--cgroupns=private"} {
		if !strings.Contains(args[0], want) {
			t.Errorf("node flags %q lack %q", args[0], want)
		}
	}
	if !strings.HasSuffix(args[0], " localhost/node:v1") {
		t.Errorf("the image must come last: %q", args[0])
	}
	if value(t, got, "RUN.network") != "tkg-e2e-sim-1" || value(t, got, "guestinfo.userdata") != "e30=" {
		t.Errorf("network or guestinfo lost: %v", got)
	}

	// Completing twice (a second power-on) changes nothing.
	again := vc.complete("mgmt-abc-x1", got)
	if value(t, again, "RUN.container") != value(t, got, "RUN.container") || len(again) != len(got) {
		t.Errorf("second completion changed the VM: %q", value(t, again, "RUN.container"))
	}

	pause := vc.complete("other", extra("RUN.container", `["registry.k8s.io/pause:3.10"]`, "RUN.network", "mine"))
	if c := value(t, pause, "RUN.container"); strings.Contains(c, "--privileged") || !strings.Contains(c, "--label tkg-e2e.vcsim=run1 registry.k8s.io/pause:3.10") {
		t.Errorf("a non-node VM: %q", c)
	}
	if value(t, pause, "RUN.network") != "mine" {
		t.Errorf("a VM's own RUN.network must win: %v", pause)
	}

	if plain := extra("guestinfo.x", "y"); len(vc.complete("n", plain)) != 1 {
		t.Errorf("a VM without RUN.container must not get one")
	}
}

func TestValuesThatWouldBreakVcsimsShellLineAreRefused(t *testing.T) {
	for _, vc := range []vmContainers{
		{Network: "a b"},
		{NodeImages: []string{"img;rm -rf /"}},
		{Label: "$(x)"},
	} {
		if err := vc.validate(); err == nil {
			t.Errorf("%+v accepted", vc)
		}
	}
	if err := (vmContainers{Network: "tkg-e2e-sim-1", NodeImages: []string{"localhost/tkg-e2e/vsphere-sim-node:v1.33.1"}, Label: "x"}).validate(); err != nil {
		t.Error(err)
	}
}
