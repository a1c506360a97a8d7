package clusters

import (
	"context"
	"fmt"
	"strings"

	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/wait"
)

// StopAfterProvisioned is CreateInput.StopAfter for a stand-in vCenter whose
// VMs boot no guest OS (vcsim): Create stops once every Machine that can be
// provisioned before the control plane answers is.
const StopAfterProvisioned = "provisioned"

// StoppedError says that Create stopped on purpose at a rehearsal limit,
// how far the cluster got, and why it cannot go further. It is not a
// failure of the cluster or the harness.
type StoppedError struct {
	Cluster string
	// Reached are the milestones every provisionable Machine reached, in order.
	Reached []string
	// Machines describes each Machine as last seen.
	Machines []string
	Reason   string
}

func (e *StoppedError) Error() string {
	return fmt.Sprintf("stopped at the rehearsal limit: cluster %s reached %s; %s\n  machines: %s",
		e.Cluster, strings.Join(e.Reached, " -> "), e.Reason, strings.Join(e.Machines, "; "))
}

// waitProvisioned waits until every Machine with bootstrap data has its
// infrastructure provisioned, an address and a providerID (a VM cloned,
// powered on, with an IP: what a vCenter can do without a guest OS), and at
// least one such Machine exists. Machines without bootstrap data wait for the
// control plane's API, which a stand-in vCenter never serves.
func waitProvisioned(ctx context.Context, mgmt *kube.Cluster, in CreateInput, reason string) error {
	var last []Machine
	err := wait.For(ctx, wait.Options{What: "machines of " + in.Name + " provisioned (VM cloned, powered on, IP, providerID)",
		Timeout: in.Timeouts.MachinesRunning.Timeout, Interval: in.Timeouts.MachinesRunning.Poll, Progress: in.Progress, Prefix: in.Prefix},
		func(ctx context.Context) (bool, string, error) {
			ms, err := Machines(ctx, mgmt.Client, in.Namespace, in.Name)
			if err != nil {
				return false, "", err
			}
			last = ms
			done, ready := 0, 0
			for _, m := range ms {
				if !m.BootstrapReady {
					continue
				}
				ready++
				if m.Provisioned && m.ProviderID != "" && len(m.Addresses) > 0 {
					done++
				}
			}
			return ready > 0 && done == ready, strings.Join(describe(ms), "; "), nil
		})
	if err != nil {
		return err
	}
	return &StoppedError{Cluster: in.Name, Reached: []string{"applied", "VM cloned", "powered on", "IP address", "providerID"},
		Machines: describe(last), Reason: reason}
}

func describe(ms []Machine) []string {
	var out []string
	for _, m := range ms {
		s := fmt.Sprintf("%s %s", m.Name, orDash(m.Phase))
		switch {
		case !m.BootstrapReady:
			s += " (no bootstrap data: needs the control plane's API)"
		case m.ProviderID != "":
			s += fmt.Sprintf(" providerID=%s ip=%s", m.ProviderID, strings.Join(m.Addresses, ","))
		}
		out = append(out, s)
	}
	return out
}
