package kind

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	kindcluster "sigs.k8s.io/kind/pkg/cluster"

	"github.com/tkg-e2e/harness/framework/node"
	"github.com/tkg-e2e/harness/framework/run"
)

// Deleter returns cleanup's deleter of kind-cluster resources: Delete, each
// bounded by timeout. Cleanup marks the resource deleted.
func Deleter(timeout time.Duration, progress io.Writer, prefix string) func(ctx context.Context, r run.Resource) (string, error) {
	return func(ctx context.Context, r run.Resource) (string, error) {
		return "kind delete", Delete(ctx, DeleteInput{Name: r.Name, KubeconfigPath: r.Kubeconfig, Timeout: timeout,
			Progress: progress, Prefix: prefix})
	}
}

// LeakCheck returns cleanup's check that no kind cluster named after the
// run's resources of these kinds is left.
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
		var leaks []string
		for _, k := range kcs {
			if names.Match(k) {
				leaks = append(leaks, "kind cluster "+k)
			}
		}
		return leaks, fmt.Sprintf("%d kind clusters checked against %d run cluster names", len(kcs), len(names)), nil
	}
}
