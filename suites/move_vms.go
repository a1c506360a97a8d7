package suites

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/tkg-e2e/harness/framework/vsphere"
)

// moveVMs is the vCenter's side of "nothing re-provisioned by the move"
// for CAPV clusters: the Machines keep their names and UIDs (move's own
// check), and the VMs behind them keep theirs, none cloned or destroyed.
// A VM's managed object reference is its identity: a VM that CAPV
// destroyed and cloned again under the same name gets a new one.
type moveVMs struct {
	env     *Env
	cluster string
	before  []vsphere.VM
}

// snapshotVMs lists the cluster's VMs before the move; nil without CAPV.
func snapshotVMs(ctx context.Context, env *Env, cluster string) (*moveVMs, error) {
	if !env.Config.UsesCAPV() {
		return nil, nil
	}
	sess, err := vsphereSession(ctx, env, env.Interval(ScopePreflight, "connect"))
	if err != nil {
		return nil, fmt.Errorf("vCenter, before the move: %w", err)
	}
	vms, err := sess.ClusterVMs(ctx, placementOf(env.Config), []string{cluster})
	if err != nil {
		return nil, fmt.Errorf("listing the VMs of %s before the move: %w", cluster, err)
	}
	return &moveVMs{env: env, cluster: cluster, before: withoutTemplates(vms)}, nil
}

// check compares the VMs after the move with those before, and says what
// it compared.
func (m *moveVMs) check(ctx context.Context) (string, error) {
	if m == nil {
		return "", nil
	}
	sess, err := vsphereSession(ctx, m.env, m.env.Interval(ScopePreflight, "connect"))
	if err != nil {
		return "", fmt.Errorf("vCenter, after the move: %w", err)
	}
	vms, err := sess.ClusterVMs(ctx, placementOf(m.env.Config), []string{m.cluster})
	if err != nil {
		return "", fmt.Errorf("listing the VMs of %s after the move: %w", m.cluster, err)
	}
	return compareVMs(m.cluster, m.before, withoutTemplates(vms))
}

func compareVMs(cluster string, before, after []vsphere.VM) (string, error) {
	key := func(v vsphere.VM) string { return v.Name + " (" + v.Ref + ")" }
	was, is := map[string]vsphere.VM{}, map[string]vsphere.VM{}
	for _, v := range before {
		was[key(v)] = v
	}
	for _, v := range after {
		is[key(v)] = v
	}
	var gone, added, off []string
	for k := range was {
		if _, ok := is[k]; !ok {
			gone = append(gone, k)
		}
	}
	for k, v := range is {
		if _, ok := was[k]; !ok {
			added = append(added, k)
		} else if v.PowerState != was[k].PowerState {
			off = append(off, fmt.Sprintf("%s %s -> %s", k, was[k].PowerState, v.PowerState))
		}
	}
	if len(before) == 0 {
		return "", fmt.Errorf("vCenter lists no VM of %s before the move: nothing to compare (is vsphere.folder where CAPV clones?)", cluster)
	}
	if len(gone)+len(added)+len(off) > 0 {
		var parts []string
		for _, p := range []struct {
			what string
			l    []string
		}{{"destroyed", gone}, {"new", added}, {"power changed", off}} {
			if len(p.l) > 0 {
				parts = append(parts, p.what+": "+strings.Join(slices.Sorted(slices.Values(p.l)), ", "))
			}
		}
		return "", fmt.Errorf("the move re-provisioned VMs of %s in vCenter (%s): CAPV on the target cluster did not adopt the moved VSphereVMs", cluster, strings.Join(parts, "; "))
	}
	return fmt.Sprintf("vCenter: the %d VMs of %s are the same before and after the move (same managed object references, power states)", len(after), cluster), nil
}

func withoutTemplates(vms []vsphere.VM) []vsphere.VM {
	var out []vsphere.VM
	for _, v := range vms {
		if !v.Template {
			out = append(out, v)
		}
	}
	return out
}
