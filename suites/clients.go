package suites

import (
	"fmt"

	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/kube"
)

// clientsFor returns a controller-runtime client (kube.Scheme has the
// kapp-controller types) and a clientset (for logs) of a cluster.
func clientsFor(c *Cluster) (client.Client, kubernetes.Interface, error) {
	k, err := kube.Connect(c.Kubeconfig)
	if err != nil {
		return nil, nil, fmt.Errorf("%s cluster %q: %w", c.Role, c.Name, err)
	}
	return k.Client, k.Clientset, nil
}
