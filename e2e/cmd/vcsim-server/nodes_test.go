package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/simulator"
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

// A power-off's docker stop outlasts an inspect that vcsim then applies
// after the power-off task: the model says on again for one inspect
// interval. A destroy in that window must find the VM off, as a vCenter
// would, when its container has stopped; and still fail when it runs.
func TestDestroyRightAfterPowerOffFindsTheVMOffWhenItsContainerStopped(t *testing.T) {
	for _, tc := range []struct {
		name               string
		running, found     bool
		wantDestroyFailure bool
	}{
		{name: "container stopped", running: false, found: true},
		{name: "container running", running: true, found: true, wantDestroyFailure: true},
		{name: "no container found", running: false, found: false, wantDestroyFailure: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := simulator.VPX()
			if err := m.Create(); err != nil {
				t.Fatal(err)
			}
			defer m.Remove()
			var asked []string
			vc := vmContainers{ContainerState: func(vm string) (bool, bool) { asked = append(asked, vm); return tc.running, tc.found }}
			m.Map().Handler = vc.handler
			s := m.Service.NewServer()
			defer s.Close()
			ctx := t.Context()
			c, err := govmomi.NewClient(ctx, s.URL, true)
			if err != nil {
				t.Fatal(err)
			}
			vms, err := find.NewFinder(c.Client, true).VirtualMachineList(ctx, "/DC0/vm/*")
			if err != nil || len(vms) == 0 {
				t.Fatalf("no VM in the model: %v", err)
			}
			vm := vms[0]
			// vcsim's VPX VMs start powered on; mark this one as backed by a
			// container without starting one (RUN.container after power-on).
			sim := m.Map().Get(vm.Reference()).(*simulator.VirtualMachine)
			simCtx := m.Service.Context
			simCtx.WithLock(sim, func() {
				sim.Config.ExtraConfig = append(sim.Config.ExtraConfig, &types.OptionValue{Key: simulator.ContainerBackingOptionKey, Value: `["busybox"]`})
			})
			task, err := vm.Destroy(ctx)
			if err == nil {
				err = task.Wait(ctx)
			}
			if tc.wantDestroyFailure {
				if err == nil || !strings.Contains(err.Error(), "InvalidPowerState") {
					t.Fatalf("destroy of a VM whose container runs (or is unknown): want InvalidPowerState, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("destroy of a VM whose container stopped: %v", err)
			}
			if len(asked) == 0 || asked[0] != vm.Name() {
				t.Fatalf("asked about containers %v, want %s", asked, vm.Name())
			}
		})
	}
}
