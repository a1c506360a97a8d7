package kind

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	kindcluster "sigs.k8s.io/kind/pkg/cluster"

	"github.com/tkg-e2e/harness/framework/cleanup"
	"github.com/tkg-e2e/harness/framework/node"
	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/framework/wait"
)

// Deleter returns cleanup's deleter of kind-cluster resources. It removes,
// by ID, the containers of the cluster that are the run's (recorded at
// creation, see RecordContainers, or made by kind for it while the run
// worked: node.Claim) and leaves every other container labelled with the
// cluster's name alone, saying so. It never calls kind's delete, which
// removes every container carrying the cluster's label, whoever made it.
// Cleanup marks the resource deleted.
func Deleter(timeout time.Duration, progress io.Writer, prefix string) func(ctx context.Context, r run.Resource) (string, error) {
	return func(ctx context.Context, r run.Resource) (string, error) {
		if err := node.ValidateName("Name", r.Name); err != nil {
			return "", fmt.Errorf("kind cluster: %w", err)
		}
		if timeout <= 0 {
			timeout = 5 * time.Minute
		}
		dctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		s, until := cleanup.RunOf(ctx)
		if rec, ok := recordedIn(s, r.Name); ok && r.Attributes[node.AttrContainers] == "" {
			// A caller that built the resource by name (the self-hosted
			// teardown's throw-away cluster): what the state recorded counts.
			r.Attributes = rec.Attributes
		}
		removed, leftAlone, err := node.RemoveOwned(dctx, r, node.IdentityOf(s, until))
		if err != nil {
			return "", fmt.Errorf("kind cluster %s: %w (by hand: docker rm -f -v <its containers>)", r.Name, err)
		}
		how := fmt.Sprintf("removed the run's %d containers by ID (%s)", len(removed), strings.Join(removed, ", "))
		if len(leftAlone) > 0 {
			how += "; " + strings.Join(leftAlone, "; ")
		}
		return how, nil
	}
}

// RecordContainers records the IDs of the kind cluster's node containers in
// the run state (node.AttrContainers): call it once kind has created them.
// Only containers named as kind names nodes ("<cluster>-control-plane",
// "<cluster>-worker", ...) and made since the run started are recorded.
func RecordContainers(ctx context.Context, s *run.State, name string) ([]string, error) {
	key := run.Resource{Kind: ResourceKind, Name: name}.Key()
	cs, err := node.ListCluster(ctx, name)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, c := range cs {
		if kindNodeName(name, c.Name) {
			names[c.Name] = true
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("kind cluster %s: no node container found to record", name)
	}
	return node.RecordContainers(ctx, s, key, names)
}

// kindNodeName: how kind names a cluster's containers.
func kindNodeName(cluster, name string) bool {
	rest, ok := strings.CutPrefix(name, cluster+"-")
	if !ok {
		return false
	}
	for _, p := range []string{"control-plane", "worker", "external-load-balancer"} {
		if n, ok := strings.CutPrefix(rest, p); ok && strings.Trim(n, "0123456789") == "" {
			return true
		}
	}
	return false
}

// LeakCheck returns cleanup's check that no kind cluster of the run's
// resources of these kinds is left. kind knows a cluster only by the label
// on its containers, so a kind cluster of a run name is a leak only when a
// container of it is the run's (node.Claim); one made only of others'
// containers is reported in what was checked, and left alone.
func LeakCheck(kinds ...string) func(ctx context.Context, s *run.State) (leaks []string, checked string, err error) {
	return func(ctx context.Context, s *run.State) ([]string, string, error) {
		if s == nil {
			return nil, "", errors.New("kind.LeakCheck: the run state is nil")
		}
		names := node.NamesOf(s, kinds...)
		if len(names) == 0 {
			return nil, "no cluster recorded by the run: no kind cluster to look for", nil
		}
		kcs, err := kindcluster.NewProvider(kindcluster.ProviderWithDocker()).List()
		if err != nil {
			return nil, "", fmt.Errorf("listing kind clusters: %w", err)
		}
		st, until := cleanup.RunOf(ctx)
		if st != s {
			until = time.Time{}
		}
		id := node.IdentityOf(s, until)
		byName := map[string]run.Resource{}
		for _, r := range s.Resources {
			if names[r.Name] {
				byName[r.Name] = r
			}
		}
		var leaks, others []string
		for _, k := range kcs {
			r, ok := byName[k]
			if !ok {
				continue
			}
			cs, err := node.ListCluster(ctx, k)
			if err != nil {
				return nil, "", err
			}
			mine, _ := node.Split(node.Claim(cs, r, id))
			if len(mine) > 0 {
				leaks = append(leaks, "kind cluster "+k)
			} else {
				others = append(others, fmt.Sprintf("kind lists a cluster %s, but none of its %d containers is this run's: left alone", k, len(cs)))
			}
		}
		checked := fmt.Sprintf("%d kind clusters checked against %d run cluster names", len(kcs), len(names))
		if len(others) > 0 {
			checked += "; " + strings.Join(others, "; ")
		}
		return leaks, checked, nil
	}
}

// deleteOwned deletes a kind cluster the run recorded: its containers that
// are the run's (node.Claim), by ID; the others labelled with its name are
// left and reported. The resource is marked deleted.
func deleteOwned(ctx context.Context, in DeleteInput, r run.Resource) error {
	p := wait.Printer{W: in.Progress, Prefix: in.Prefix}
	start := time.Now()
	dctx, cancel := context.WithTimeout(ctx, in.Timeout)
	defer cancel()
	removed, leftAlone, err := node.RemoveOwned(dctx, r, node.IdentityOf(in.State, time.Now()))
	for _, l := range leftAlone {
		p.Printf("%s", l)
	}
	if err != nil {
		return fmt.Errorf("deleting kind cluster %s: %w", in.Name, err)
	}
	p.Printf("kind cluster %s deleted in %s (the run's %d containers: %s)", in.Name, time.Since(start).Round(100*time.Millisecond),
		len(removed), strings.Join(removed, ", "))
	return in.State.SetResourceState(r.Key(), "deleted")
}

func recordedIn(s *run.State, name string) (run.Resource, bool) {
	if s == nil {
		return run.Resource{}, false
	}
	r, ok := s.Resource(ResourceKind, name)
	return r, ok && r.Name == name
}
