package node

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tkg-e2e/harness/framework/run"
)

// RunNames are the names of a run's clusters. Everything kind and CAPD
// create for a cluster is named after it ("<cluster>-control-plane",
// "<cluster>-lb", the network "<cluster>"), so a name is the run's when it is
// one of them or starts with one of them and a dash.
type RunNames map[string]bool

// NamesOf collects the names of the state's resources of these kinds (kind
// clusters, Cluster API clusters), deleted or not: a leak is what is still
// there of something the run recorded.
func NamesOf(s *run.State, kinds ...string) RunNames {
	names := RunNames{}
	for _, r := range s.Resources {
		for _, k := range kinds {
			if r.Kind == k {
				names[r.Name] = true
			}
		}
	}
	return names
}

// Match reports whether name belongs to one of the run's clusters.
func (n RunNames) Match(name string) bool {
	if name == "" {
		return false
	}
	if n[name] {
		return true
	}
	for c := range n {
		if strings.HasPrefix(name, c+"-") {
			return true
		}
	}
	return false
}

// LeakCheck returns the leak check of the docker host for cleanup: the
// containers (by name, and by the cluster label of each run cluster) and
// docker networks (other than the shared "kind" network) that belong to the
// run's resources of these kinds.
func LeakCheck(kinds ...string) func(ctx context.Context, s *run.State) (leaks []string, checked string, err error) {
	return func(ctx context.Context, s *run.State) ([]string, string, error) {
		if s == nil {
			return nil, "", errors.New("node.LeakCheck: the run state is nil")
		}
		names := NamesOf(s, kinds...)
		if len(names) == 0 {
			// Resources are recorded before they are created: a run that
			// recorded no cluster put nothing on the docker host, which may
			// not even exist (FOCUS=ova).
			return nil, "no cluster recorded by the run: nothing to look for on the docker host", nil
		}
		all, err := list(ctx, nil)
		if err != nil {
			return nil, "", err
		}
		var leaks []string
		seen := map[string]bool{}
		add := func(c Container) {
			if !seen[c.Name] {
				seen[c.Name] = true
				leaks = append(leaks, fmt.Sprintf("container %s (%s)", c.Name, c.Status))
			}
		}
		for _, c := range all {
			if names.Match(c.Name) {
				add(c)
			}
		}
		// The Runtime does not return labels: ask for each run cluster's label.
		for n := range names {
			cs, err := ClusterContainers(ctx, n)
			if err != nil {
				return nil, "", err
			}
			for _, c := range cs {
				add(c)
			}
		}
		nets, err := Networks(ctx)
		if err != nil {
			return nil, "", err
		}
		for _, n := range nets {
			if n != SharedNetwork && names.Match(n) {
				leaks = append(leaks, "network "+n)
			}
		}
		return leaks, fmt.Sprintf("%d containers and %d networks on the docker host checked against %d run cluster names",
			len(all), len(nets), len(names)), nil
	}
}
