// Package kube holds the Kubernetes plumbing the lifecycle packages share:
// the one place API clients are built from a kubeconfig, server-side apply of
// manifests with retry, and waits for Deployments, APIServices and API server
// readiness. Every wait goes through framework/wait, so it prints progress and
// its timeout error carries the last state seen.
package kube

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	kapppkgv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	kappdatav1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Scheme knows the core Kubernetes types, CRDs, Cluster API v1beta2, the
// clusterctl inventory and kapp-controller's packaging types, so that one
// client serves the lifecycle stages, the package checks and the artifacts
// collector; everything else is handled as unstructured.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme,
		clusterv1.AddToScheme, clusterctlv1.AddToScheme, kapppkgv1alpha1.AddToScheme, kappdatav1alpha1.AddToScheme} {
		// AddToScheme only fails on a type registered twice under different
		// names: a programming error every test would hit.
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}

// RequestTimeout bounds a single API request, so a wait on an API server that
// does not answer polls again instead of hanging for the whole wait.
const RequestTimeout = 15 * time.Second

// Cluster is a connection to one Kubernetes API server.
type Cluster struct {
	// Kubeconfig is the file it was built from (or the name given to ConnectBytes).
	Kubeconfig string
	Config     *rest.Config
	// Client knows Scheme's types.
	Client    client.Client
	Clientset kubernetes.Interface
	// Dynamic lists kinds only known at run time (the artifacts dump).
	Dynamic dynamic.Interface
}

type options struct {
	requestTimeout time.Duration
	dialTimeout    time.Duration
	qps            float32
	burst          int
	userAgent      string
}

// Option tunes a connection; without options a request times out after
// RequestTimeout and client-side throttling allows 50 QPS (burst 100).
type Option func(*options)

// WithRequestTimeout bounds every request through the rest config, so a dead
// API server fails fast even where a library ignores the context.
func WithRequestTimeout(d time.Duration) Option { return func(o *options) { o.requestTimeout = d } }

// WithDialTimeout bounds connecting to the API server. A stopped load
// balancer or node leaves an address nothing answers for: connecting then
// takes the kernel's retries (14 s measured) unless bounded.
func WithDialTimeout(d time.Duration) Option { return func(o *options) { o.dialTimeout = d } }

// WithRateLimit sets client-side throttling (client-go's default of 5 QPS
// would make a few hundred list requests take a minute).
func WithRateLimit(qps float32, burst int) Option {
	return func(o *options) { o.qps, o.burst = qps, burst }
}

// WithUserAgent names the caller in the API server's audit log.
func WithUserAgent(ua string) Option { return func(o *options) { o.userAgent = ua } }

// Connect builds clients from a kubeconfig file. It does not contact the
// server (the REST mapper is lazy), so it works before the API answers.
func Connect(kubeconfig string, opts ...Option) (*Cluster, error) {
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
	return ConnectConfig(kubeconfig, cfg, opts...)
}

// ConnectBytes builds clients from kubeconfig content (e.g. a Cluster API
// <cluster>-kubeconfig Secret); name is only used in messages.
func ConnectBytes(name string, kubeconfig []byte, opts ...Option) (*Cluster, error) {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("parsing kubeconfig of %s: %w", name, err)
	}
	return ConnectConfig(name, cfg, opts...)
}

// ConnectConfig builds clients from a rest.Config; cfg itself is not changed.
func ConnectConfig(name string, cfg *rest.Config, opts ...Option) (*Cluster, error) {
	o := options{requestTimeout: RequestTimeout, qps: 50, burst: 100}
	for _, opt := range opts {
		opt(&o)
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = o.requestTimeout
	if o.dialTimeout > 0 {
		cfg.Dial = (&net.Dialer{Timeout: o.dialTimeout, KeepAlive: 30 * time.Second}).DialContext
	}
	cfg.QPS, cfg.Burst = o.qps, o.burst
	if o.userAgent != "" {
		cfg.UserAgent = o.userAgent
	}
	// PodSecurity "restricted" warnings on every apply, and deprecation
	// warnings for every kind the artifacts collector lists, are noise in
	// progress output and say nothing about a failure.
	cfg.WarningHandler = rest.NoWarnings{}
	c, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", name, err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("clientset for %s: %w", name, err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("dynamic client for %s: %w", name, err)
	}
	return &Cluster{Kubeconfig: name, Config: cfg, Client: c, Clientset: cs, Dynamic: dyn}, nil
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
