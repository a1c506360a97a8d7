package node

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tkg-e2e/harness/framework/cleanup"
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

// LeakCheck returns the leak check of the docker host for cleanup: for each
// of the run's resources of these kinds, the containers labelled with its
// cluster name that are the run's (Claim: recorded by ID, or made by kind or
// CAPD for it while the run worked) are leaks; the others carrying the label
// are someone else's and are reported in what was checked, never as the
// run's. Docker networks named after the run's clusters (other than the
// shared "kind" network) are leaks too.
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
		st, until := cleanup.RunOf(ctx)
		if st != s {
			until = time.Time{}
		}
		id := IdentityOf(s, until)
		var leaks, others []string
		seen := map[string]bool{}
		n := 0
		for _, r := range resourcesOf(s, kinds...) {
			cs, err := ListCluster(ctx, r.Name)
			if err != nil {
				return nil, "", err
			}
			n += len(cs)
			mine, notes := Split(Claim(cs, r, id))
			for _, c := range mine {
				if !seen[c.ID] {
					seen[c.ID] = true
					leaks = append(leaks, fmt.Sprintf("container %s (%s)", c.Name, c.Status))
				}
			}
			others = append(others, notes...)
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
		checked := fmt.Sprintf("%d containers labelled with the run's %d cluster names and %d networks on the docker host checked",
			n, len(names), len(nets))
		if len(others) > 0 {
			checked += "; " + strings.Join(others, "; ")
		}
		return leaks, checked, nil
	}
}

// resourcesOf are the state's resources of these kinds, deleted or not.
func resourcesOf(s *run.State, kinds ...string) []run.Resource {
	var out []run.Resource
	for _, r := range s.Resources {
		if slices.Contains(kinds, r.Kind) {
			out = append(out, r)
		}
	}
	return out
}
