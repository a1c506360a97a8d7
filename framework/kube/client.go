// Package kube holds the Kubernetes plumbing the lifecycle packages share:
// clients built from a kubeconfig file, server-side apply of manifests with
// retry, and waits for Deployments, APIServices and API server readiness.
// Every wait goes through framework/wait, so it prints progress and its
// timeout error carries the last state seen.
package kube

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	pkgv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	dpv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Scheme knows the core Kubernetes types, CRDs, Cluster API v1beta2, the
// clusterctl inventory and kapp-controller's packaging types (PackageInstall,
// PackageRepository, Package, PackageMetadata); everything else is handled as
// unstructured.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = apiextensionsv1.AddToScheme(s)
	_ = clusterv1.AddToScheme(s)
	_ = clusterctlv1.AddToScheme(s)
	_ = pkgv1alpha1.AddToScheme(s)
	_ = dpv1alpha1.AddToScheme(s)
	return s
}

// RequestTimeout bounds a single API request, so a wait on an API server that
// does not answer polls again instead of hanging for the whole wait.
const RequestTimeout = 15 * time.Second

// Cluster is a connection to one Kubernetes API server.
type Cluster struct {
	// Kubeconfig is the file it was built from.
	Kubeconfig string
	Config     *rest.Config
	Client     client.Client
	Clientset  kubernetes.Interface
}

// Connect builds clients from a kubeconfig file. It does not contact the
// server (the REST mapper is lazy), so it works before the API answers.
func Connect(kubeconfig string) (*Cluster, error) {
	if kubeconfig == "" {
		return nil, errors.New("kubeconfig path is empty")
	}
	if _, err := os.Stat(kubeconfig); err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("reading kubeconfig %s: %w", kubeconfig, err)
	}
	return ConnectConfig(kubeconfig, cfg)
}

// ConnectBytes builds clients from kubeconfig content (e.g. a Cluster API
// <cluster>-kubeconfig Secret); name is only used in messages.
func ConnectBytes(name string, kubeconfig []byte) (*Cluster, error) {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("parsing kubeconfig of %s: %w", name, err)
	}
	return ConnectConfig(name, cfg)
}

// ConnectConfig builds clients from a rest.Config.
func ConnectConfig(name string, cfg *rest.Config) (*Cluster, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = RequestTimeout
	// PodSecurity "restricted" warnings on every apply are noise in progress output.
	cfg.WarningHandler = rest.NoWarnings{}
	cfg.QPS, cfg.Burst = 50, 100
	c, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", name, err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("clientset for %s: %w", name, err)
	}
	return &Cluster{Kubeconfig: name, Config: cfg, Client: c, Clientset: cs}, nil
}

// Ready asks the API server's /readyz once.
func (c *Cluster) Ready(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	body, err := c.Clientset.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("GET /readyz: %w", err)
	}
	if string(body) != "ok" {
		return fmt.Errorf("GET /readyz: %q", truncate(string(body), 200))
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
