package move

import (
	"context"
	"fmt"
	"io"
	"time"

	clusterctlclient "sigs.k8s.io/cluster-api/cmd/clusterctl/client"

	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/wait"
)

// PivotInput is the input of Pivot.
type PivotInput struct {
	FromKubeconfig, ToKubeconfig string
	Namespace                    string
	ClusterctlConfigPath         string
	Timeout                      time.Duration
	Progress                     io.Writer
	Prefix                       string
}

// Pivot is a bare `clusterctl move` without Move's checks: the way out of a
// self-hosted management cluster at the end of a run (move it back into a
// throw-away bootstrap cluster, then delete it there, as `tanzu
// management-cluster delete` does). Nothing is measured; it only has to work.
func Pivot(ctx context.Context, in PivotInput) error {
	if in.FromKubeconfig == "" || in.ToKubeconfig == "" || in.Namespace == "" || in.Timeout <= 0 {
		return fmt.Errorf("move.Pivot: invalid input: FromKubeconfig, ToKubeconfig, Namespace and Timeout (> 0) are required")
	}
	mctx, cancel := context.WithTimeout(ctx, in.Timeout)
	defer cancel()
	wait.Printer{W: in.Progress, Prefix: in.Prefix}.Printf("clusterctl move -n %s: %s -> %s", in.Namespace, in.FromKubeconfig, in.ToKubeconfig)
	err := clusterctlMove(mctx, kube.ClusterctlLog{Out: in.Progress, Prefix: in.Prefix}, in.ClusterctlConfigPath,
		in.FromKubeconfig, in.ToKubeconfig, in.Namespace)
	if err != nil {
		if ctx.Err() == nil && mctx.Err() != nil {
			return fmt.Errorf("clusterctl move -n %s back: timed out after %s: %w", in.Namespace, in.Timeout, err)
		}
		return fmt.Errorf("clusterctl move -n %s back: %w", in.Namespace, err)
	}
	return nil
}

// clusterctlMove is `clusterctl move -n namespace` through the clusterctl
// library, its log going where log says (Move and Pivot both move this way).
func clusterctlMove(ctx context.Context, log kube.ClusterctlLog, configPath, from, to, namespace string) error {
	return kube.ClusterctlCall(ctx, log, func(ctx context.Context) error {
		c, err := clusterctlclient.New(ctx, configPath)
		if err != nil {
			return err
		}
		return c.Move(ctx, clusterctlclient.MoveOptions{FromKubeconfig: clusterctlclient.Kubeconfig{Path: from},
			ToKubeconfig: clusterctlclient.Kubeconfig{Path: to}, Namespace: namespace})
	})
}
