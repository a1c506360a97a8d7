package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strings"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// vmContainers says how the server's VMs are backed by containers, beyond
// what vcsim does by itself from RUN.container.
type vmContainers struct {
	// Network every VM container joins when its extraConfig names none
	// (RUN.network): the run's docker network, shared with the kind
	// clusters that run CAPV and with the other clusters' VMs.
	Network string
	// NodeImages boot as Kubernetes nodes: systemd as PID 1, cloud-init
	// reading CAPV's guestinfo. They need what kind gives its nodes.
	NodeImages []string
	// Label is the value of ContainerLabel on every VM container, so what
	// a stopped or killed server leaves behind can be found and removed
	// (vcsim labels none itself).
	Label string
	// ContainerState says whether the container of the VM named vmName
	// exists and runs; nil asks docker (dockerContainerState).
	ContainerState func(vmName string) (running, found bool)
}

// ContainerLabel is the key of the label every VM container gets.
const ContainerLabel = "tkg-e2e.vcsim"

// safeWord is what may go into the docker create line vcsim builds: it
// joins its arguments into one `bash -c` string without quoting, so a
// value with a space or a shell character would be split or run.
var safeWord = regexp.MustCompile(`^[A-Za-z0-9._:/=@+,-]+$`)

func (v vmContainers) validate() error {
	var bad []string
	for _, w := range append([]string{v.Network, v.Label}, v.NodeImages...) {
		if w != "" && !safeWord.MatchString(w) {
			bad = append(bad, fmt.Sprintf("%q", w))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s: only letters, digits and ._:/=@+,- can pass through vcsim's docker command line", strings.Join(bad, ", "))
	}
	return nil
}

// handler runs before every SOAP method. On a power-on of a VM that vcsim
// will back by a container, it completes the VM's RUN.* keys once: vcsim
// starts the container with `docker create <RUN.container[0]> <rest>`, so
// docker flags placed before the image reach docker (the simulator's own
// extension point for this is the container registry, which only names an
// image).
//
// Before a destroy or unregister of such a VM, it makes the VM's power state
// the container's (settlePowerState).
func (v vmContainers) handler(ctx *simulator.Context, m *simulator.Method) (mo.Reference, types.BaseMethodFault) {
	if m.This.Type != "VirtualMachine" {
		return nil, nil
	}
	switch m.Name {
	case "PowerOnVM_Task":
		vm, ok := ctx.Map.Get(m.This).(*simulator.VirtualMachine)
		if !ok {
			return nil, nil
		}
		ctx.WithLock(vm, func() {
			vm.Config.ExtraConfig = v.complete(vm.Name, vm.Config.ExtraConfig)
		})
	case "Destroy_Task", "UnregisterVM":
		if vm, ok := ctx.Map.Get(m.This).(*simulator.VirtualMachine); ok {
			v.settlePowerState(ctx, vm)
		}
	}
	return nil, nil
}

// settlePowerState sets a container-backed VM that the model says is on,
// but whose container has stopped, powered off. vcsim refreshes a VM from
// `docker inspect` every VCSIM_INSPECT_INTERVAL; an inspect taken while a
// power-off's `docker stop` was still running lands after the power-off
// task and sets the VM back on for one interval. CAPV destroys a VM right
// after powering it off, so its Destroy_Task failed with InvalidPowerState
// and CAPV retried only a minute later, on every VM of every cluster
// deleted. A vCenter's power state never goes back on by itself.
func (v vmContainers) settlePowerState(ctx *simulator.Context, vm *simulator.VirtualMachine) {
	var on, backed bool
	var name string
	ctx.WithLock(vm, func() {
		name = vm.Name
		on = vm.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOn
		for _, o := range vm.Config.ExtraConfig {
			backed = backed || o.GetOptionValue().Key == simulator.ContainerBackingOptionKey
		}
	})
	if !on || !backed {
		return
	}
	state := v.ContainerState
	if state == nil {
		state = dockerContainerState
	}
	if running, found := state(name); !found || running {
		return
	}
	ctx.Update(vm, []types.PropertyChange{
		{Name: "runtime.powerState", Val: types.VirtualMachinePowerStatePoweredOff},
		{Name: "summary.runtime.powerState", Val: types.VirtualMachinePowerStatePoweredOff},
	})
}

// dockerContainerState finds the VM's container by the name vcsim gives it
// (vcsim-<VM name>-<VM uuid>).
func dockerContainerState(vmName string) (running, found bool) {
	out, err := exec.Command("docker", "ps", "-a", "--filter", "name=^vcsim-"+vmName+"-", "--format", "{{.Names}} {{.State}}").Output()
	if err != nil {
		return false, false
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		n, st, ok := strings.Cut(line, " ")
		// The name filter matches a prefix: vm-1 would match vm-10's too.
		if !ok || !strings.HasPrefix(n, "vcsim-"+vmName+"-") || strings.Count(strings.TrimPrefix(n, "vcsim-"+vmName+"-"), "-") != 4 {
			continue
		}
		return st == "running", true
	}
	return false, false
}

// complete returns the VM's extraConfig with the docker flags its
// container needs; unchanged when it has no RUN.container or was already
// completed (a second power-on restarts the same container).
func (v vmContainers) complete(name string, extra []types.BaseOptionValue) []types.BaseOptionValue {
	at, hasNetwork := -1, false
	for i, o := range extra {
		switch o.GetOptionValue().Key {
		case simulator.ContainerBackingOptionKey:
			at = i
		case "RUN.network":
			hasNetwork = true
		}
	}
	if at < 0 {
		return extra
	}
	raw, _ := extra[at].GetOptionValue().Value.(string)
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		args = []string{raw}
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return extra
	}
	flags := v.flags(name, args[0])
	if len(flags) == 0 && (hasNetwork || v.Network == "") {
		return extra
	}
	args[0] = strings.Join(append(flags, args[0]), " ")
	b, _ := json.Marshal(args)
	out := slices.Clone(extra)
	out[at] = &types.OptionValue{Key: simulator.ContainerBackingOptionKey, Value: string(b)}
	if !hasNetwork && v.Network != "" {
		out = append(out, &types.OptionValue{Key: "RUN.network", Value: v.Network})
	}
	return out
}

// flags are the docker create flags for a VM's container. A node gets
// what kind gives its node containers (systemd needs the privileges, its
// own cgroup namespace, tmpfs /run and /tmp, a tty; kubelet wants
// /lib/modules), plus the VM's name as host name, which the vSphere cloud
// provider uses to find the node's VM, and systemd's halt signal, so a
// power-off takes a fraction of a second instead of docker's 10 s timeout.
func (v vmContainers) flags(vmName, image string) []string {
	var f []string
	if v.Label != "" {
		f = append(f, "--label", ContainerLabel+"="+v.Label)
	}
	if !slices.Contains(v.NodeImages, image) {
		return f
	}
	if !safeWord.MatchString(vmName) {
		// CAPV names VMs after Machines (DNS labels); anything else
		// cannot be a host name either.
		return f
	}
	return append(f,
		"--privileged", "--cgroupns=private", "--init=false", "--tty",
		"--security-opt", "seccomp=unconfined", "--security-opt", "apparmor=unconfined",
		"--tmpfs", "/tmp", "--tmpfs", "/run", "--volume", "/var",
		"--volume", "/lib/modules:/lib/modules:ro",
		"--hostname", vmName, "--stop-signal", "SIGRTMIN+3",
	)
}
