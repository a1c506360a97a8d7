package suites

import (
	"fmt"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/packages"
)

// restConfig reads a cluster's kubeconfig, saying which cluster when it cannot.
func restConfig(c *Cluster) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("%s cluster %q: bad kubeconfig %s: %w", c.Role, c.Name, c.Kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	return cfg, nil
}

// clientsFor returns a controller-runtime client (with the kapp-controller
// types) and a clientset (for logs) of a cluster.
func clientsFor(c *Cluster) (client.Client, kubernetes.Interface, error) {
	cfg, err := restConfig(c)
	if err != nil {
		return nil, nil, err
	}
	cl, err := packages.NewClient(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("%s cluster %q: %w", c.Role, c.Name, err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("%s cluster %q: %w", c.Role, c.Name, err)
	}
	return cl, cs, nil
}
