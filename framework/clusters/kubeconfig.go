package clusters

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/wait"
)

// Kubeconfig reads the admin kubeconfig Cluster API keeps for a cluster in the
// Secret <name>-kubeconfig (what `clusterctl get kubeconfig` prints).
func Kubeconfig(ctx context.Context, mgmt client.Client, namespace, name string) ([]byte, error) {
	s := &corev1.Secret{}
	if err := mgmt.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name + "-kubeconfig"}, s); err != nil {
		return nil, err
	}
	v := s.Data["value"]
	if len(v) == 0 {
		return nil, fmt.Errorf("secret %s/%s-kubeconfig has no data.value", namespace, name)
	}
	return v, nil
}

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
			kc, err := Kubeconfig(ctx, in.Management.Client, in.Namespace, in.Name)
			if apierrors.IsNotFound(err) {
				return false, "no kubeconfig Secret yet", nil
			}
			if err != nil {
				return false, "", err
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
