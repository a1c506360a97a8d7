package main

import (
	"encoding/json"
	"fmt"
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
func (v vmContainers) handler(ctx *simulator.Context, m *simulator.Method) (mo.Reference, types.BaseMethodFault) {
	if m.Name != "PowerOnVM_Task" || m.This.Type != "VirtualMachine" {
		return nil, nil
	}
	vm, ok := ctx.Map.Get(m.This).(*simulator.VirtualMachine)
	if !ok {
		return nil, nil
	}
	ctx.WithLock(vm, func() {
		vm.Config.ExtraConfig = v.complete(vm.Name, vm.Config.ExtraConfig)
	})
	return nil, nil
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
