package cluster

import (
	"fmt"
	"net"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	crclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// clients are the API clients of one cluster. Each request is bounded by the
// item timeout through the rest config, so a dead API server fails fast even
// where a library ignores the context.
type clients struct {
	core      kubernetes.Interface
	dynamic   dynamic.Interface
	discovery discovery.DiscoveryInterface
	// cr is only for clusterctl's condition tree, which needs typed Cluster
	// API objects; crErr says why it is nil.
	cr    crclient.Client
	crErr error
}

func newClients(kubeconfigPath string, timeout time.Duration) (*clients, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfigPath)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfigPath, err)
	}
	cfg.Timeout = timeout
	// A stopped load balancer or node leaves an address nothing answers
	// for: connecting then takes the kernel's retries (14 s measured) unless
	// bounded. A live API server connects in milliseconds, so a quarter of
	// the item timeout is ample and lets a dead one fail early.
	cfg.Dial = (&net.Dialer{Timeout: timeout / 4, KeepAlive: 30 * time.Second}).DialContext
	// The client-go default (5 QPS) would make collecting a management
	// cluster's few hundred requests take a minute.
	cfg.QPS, cfg.Burst = 100, 200
	cfg.UserAgent = "tkg-e2e-harness-artifacts"
	// Deprecation warnings for the kinds being dumped would go to klog's
	// stderr for every list; they say nothing about the failure.
	cfg.WarningHandler = rest.NoWarnings{}
	core, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	cl := &clients{core: core, dynamic: dyn, discovery: disc}
	cl.cr, cl.crErr = newCRClient(cfg)
	return cl, nil
}

func newCRClient(cfg *rest.Config) (crclient.Client, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, clusterv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	return crclient.New(cfg, crclient.Options{Scheme: scheme})
}
