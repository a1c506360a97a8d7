package cleanup

import (
	"context"
	"errors"
	"fmt"
	"strings"

	kind "sigs.k8s.io/kind/pkg/cluster"

	"github.com/tkg-e2e/harness/framework/bootstrap"
	"github.com/tkg-e2e/harness/framework/clusters"
	"github.com/tkg-e2e/harness/framework/run"
)

// LeakCheckInput is the input of LeakCheck.
type LeakCheckInput struct {
	// Prefix every name the run gave (kind cluster, Cluster API clusters) starts
	// with; a distinctive run prefix keeps other people's clusters out of the check.
	Prefix string
	// State adds the names of every cluster the run recorded, whatever their prefix.
	State *run.State
}

// LeakReport lists what of the run is still on the docker host.
type LeakReport struct {
	Containers   []string
	Networks     []string
	KindClusters []string
	// Checked says what was looked at, for the record.
	Checked string
}

// Clean reports whether nothing was left.
func (r *LeakReport) Clean() bool {
	return len(r.Containers)+len(r.Networks)+len(r.KindClusters) == 0
}

func (r *LeakReport) String() string {
	if r.Clean() {
		return "no leaks (" + r.Checked + ")"
	}
	return fmt.Sprintf("LEAKS: containers [%s], networks [%s], kind clusters [%s] (%s)",
		strings.Join(r.Containers, ", "), strings.Join(r.Networks, ", "), strings.Join(r.KindClusters, ", "), r.Checked)
}

// LeakCheck proves that no container, docker network (other than the shared
// "kind" network) or kind cluster of the run is left: it matches names against
// the prefix and the run's cluster names, and container labels
// (io.x-k8s.kind.cluster) against the same. It returns an error when something
// is left.
func LeakCheck(ctx context.Context, in LeakCheckInput) (*LeakReport, error) {
	if in.Prefix == "" && in.State == nil {
		return nil, errors.New("cleanup.LeakCheck: invalid input: set Prefix or State (what belongs to the run)")
	}
	names := map[string]bool{}
	if in.State != nil {
		for _, r := range in.State.Resources {
			if r.Kind == bootstrap.ResourceKindCluster || r.Kind == clusters.ResourceKind {
				names[r.Name] = true
			}
		}
	}
	ours := func(name string) bool {
		if name == "" {
			return false
		}
		if in.Prefix != "" && strings.HasPrefix(name, in.Prefix) {
			return true
		}
		if names[name] {
			return true
		}
		for n := range names {
			if strings.HasPrefix(name, n+"-") {
				return true
			}
		}
		return false
	}
	rep := &LeakReport{}
	cs, err := bootstrap.Containers(ctx)
	if err != nil {
		return nil, err
	}
	for _, c := range cs {
		if ours(c.Name) || ours(c.Labels[bootstrap.ClusterLabel]) {
			rep.Containers = append(rep.Containers, fmt.Sprintf("%s (%s)", c.Name, c.State))
		}
	}
	nets, err := bootstrap.Networks(ctx)
	if err != nil {
		return nil, err
	}
	for _, n := range nets {
		if n != bootstrap.SharedNetwork && ours(n) {
			rep.Networks = append(rep.Networks, n)
		}
	}
	kcs, err := kind.NewProvider(kind.ProviderWithDocker()).List()
	if err != nil {
		return nil, fmt.Errorf("listing kind clusters: %w", err)
	}
	for _, k := range kcs {
		if ours(k) {
			rep.KindClusters = append(rep.KindClusters, k)
		}
	}
	rep.Checked = fmt.Sprintf("%d containers, %d networks, %d kind clusters on the host checked against prefix %q and %d run cluster names",
		len(cs), len(nets), len(kcs), in.Prefix, len(names))
	if !rep.Clean() {
		return rep, errors.New(rep.String())
	}
	return rep, nil
}
