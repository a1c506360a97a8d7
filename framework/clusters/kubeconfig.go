package clusters

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/cluster-api/util/kubeconfig"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/wait"
)

// WriteKubeconfig writes a kubeconfig with owner-only permissions.
func WriteKubeconfig(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

// WaitAPIInput is the input of WaitAPI.
type WaitAPIInput struct {
	Management *kube.Cluster
	Namespace  string
	Name       string
	// KubeconfigPath is written with the cluster's kubeconfig once it exists.
	KubeconfigPath string
	Timeout        time.Duration
	Interval       time.Duration
	Progress       io.Writer
	Prefix         string
}

// WaitAPI waits until Cluster API has written the cluster's kubeconfig and the
// cluster's API server answers /readyz, saves the kubeconfig and returns a
// connection to the cluster.
func WaitAPI(ctx context.Context, in WaitAPIInput) (*kube.Cluster, error) {
	if in.Management == nil || in.Name == "" || in.Namespace == "" || in.KubeconfigPath == "" || in.Timeout <= 0 {
		return nil, errors.New("clusters.WaitAPI: invalid input: Management, Namespace, Name, KubeconfigPath and Timeout (> 0) are required")
	}
	var wl *kube.Cluster
	err := wait.For(ctx, wait.Options{What: "API server of " + in.Name + " answers", Timeout: in.Timeout, Interval: in.Interval,
		Progress: in.Progress, Prefix: in.Prefix},
		func(ctx context.Context) (bool, string, error) {
			// The admin kubeconfig Cluster API keeps in <name>-kubeconfig
			// (what `clusterctl get kubeconfig` prints).
			kc, err := kubeconfig.FromSecret(ctx, in.Management.Client, client.ObjectKey{Namespace: in.Namespace, Name: in.Name})
			if apierrors.IsNotFound(err) {
				return false, "no kubeconfig Secret yet", nil
			}
			if err != nil {
				return false, "", err
			}
			if len(kc) == 0 {
				return false, "kubeconfig Secret has an empty data.value", nil
			}
			if wl == nil {
				if wl, err = kube.ConnectBytes(in.Name, kc); err != nil {
					return false, "", wait.Permanent(err)
				}
			}
			if err := wl.Ready(ctx); err != nil {
				return false, "kubeconfig Secret exists, API server not ready", err
			}
			if err := WriteKubeconfig(in.KubeconfigPath, kc); err != nil {
				return false, "", wait.Permanent(err)
			}
			wl.Kubeconfig = in.KubeconfigPath
			return true, "API server ready", nil
		})
	if err != nil {
		return nil, err
	}
	return wl, nil
}
