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
	vms, err := clusterVMs(ctx, env, cluster, "before")
	if err != nil {
		return nil, err
	}
	return &moveVMs{env: env, cluster: cluster, before: vms}, nil
}

// check compares the VMs after the move with those before, and says what
// it compared.
func (m *moveVMs) check(ctx context.Context) (string, error) {
	if m == nil {
		return "", nil
	}
	vms, err := clusterVMs(ctx, m.env, m.cluster, "after")
	if err != nil {
		return "", err
	}
	return compareVMs(m.cluster, m.before, vms)
}

// clusterVMs lists the cluster's VMs (not templates) in the run's folder;
// when ("before", "after") names the moment in its errors.
func clusterVMs(ctx context.Context, env *Env, cluster, when string) ([]vsphere.VM, error) {
	sess, err := vsphereSession(ctx, env, env.Interval(ScopePreflight, "connect"))
	if err != nil {
		return nil, fmt.Errorf("vCenter, %s the move: %w", when, err)
	}
	vms, err := sess.ClusterVMs(ctx, placementOf(env.Config), []string{cluster})
	if err != nil {
		return nil, fmt.Errorf("listing the VMs of %s %s the move: %w", cluster, when, err)
	}
	return withoutTemplates(vms), nil
}

func compareVMs(cluster string, before, after []vsphere.VM) (string, error) {
	if len(before) == 0 {
		return "", fmt.Errorf("vCenter lists no VM of %s before the move: nothing to compare (is vsphere.folder where CAPV clones?)", cluster)
	}
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
