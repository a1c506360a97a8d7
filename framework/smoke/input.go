package smoke

import (
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/redact"
	"github.com/tkg-e2e/harness/framework/wait"
)

// Input is the input of Run.
type Input struct {
	// Cluster is the cluster to prove; its Clientset is needed too (the
	// client pods' logs are read through it).
	Cluster *kube.Cluster
	// ClusterName names the cluster in messages and the report; defaults to
	// Cluster.Kubeconfig.
	ClusterName string
	// Image runs both the servers and the clients. It must provide sh,
	// httpd, wget, nslookup, timeout, awk, tr, date and sleep (busybox
	// 1.30 or later does) and be pullable
	// by, or already loaded on, every node: pods use imagePullPolicy
	// IfNotPresent so that an image loaded into a kind or CAPD node is used
	// without a registry.
	Image string
	// Timeout bounds each wait (servers Ready, clients finished, namespace
	// deleted) and Poll is the period of those waits; both come from the
	// config intervals. The clients get a third of Timeout for their own
	// retries (see clientBudget).
	Timeout time.Duration
	Poll    time.Duration
	// Grace is how long a server or client may stay in a state that cannot
	// fix itself (a create refused by admission, an image that cannot be
	// pulled, a pod no node can take) before the wait ends with it as the
	// cause; from the config (stuck-grace). 0 is wait.DefaultGrace.
	Grace time.Duration
	// ClusterDomain is the cluster's DNS domain; defaults to "cluster.local".
	ClusterDomain string
	// RequireCrossNode makes a cluster where the clients can run on a single
	// node only (a one-node cluster) fail the "nodes" step instead of being
	// reported with cross-node traffic "not possible". A control plane
	// tainted NoSchedule with one worker is enough: it gets a client too.
	RequireCrossNode bool
	// Progress receives progress lines (nil: silent), each after Prefix
	// (default "[smoke]").
	Progress io.Writer
	Prefix   string
	// Redactor, if set, masks what is quoted from the cluster (client logs,
	// pod messages) in the result, the error and the progress lines.
	Redactor *redact.Redactor
}

// DefaultClusterDomain is the DNS domain kubeadm gives a cluster unless told otherwise.
const DefaultClusterDomain = "cluster.local"

func (in *Input) validate() error {
	var errs []string
	switch {
	case in.Cluster == nil:
		errs = append(errs, "Cluster is nil: pass the *kube.Cluster of the workload cluster (Cluster.Connect)")
	case in.Cluster.Client == nil || in.Cluster.Clientset == nil:
		errs = append(errs, "Cluster has no Client or Clientset: build it with kube.Connect, which sets both")
	}
	if strings.TrimSpace(in.Image) == "" {
		errs = append(errs, `Image is empty: set it to an image with sh, httpd, wget and nslookup, e.g. "busybox:1.35.0" (the kit's TEST_IMAGE_BUSYBOX)`)
	} else if strings.ContainsAny(in.Image, " \t\n") {
		errs = append(errs, fmt.Sprintf("Image %q contains whitespace", in.Image))
	}
	errs = append(errs, wait.Timeouts{"Timeout": in.Timeout, "Poll": in.Poll}.Missing("")...)
	if in.Timeout > 0 && in.Poll > 0 && in.Poll >= in.Timeout {
		errs = append(errs, fmt.Sprintf("Poll (%s) must be shorter than Timeout (%s)", in.Poll, in.Timeout))
	}
	if in.ClusterDomain != "" {
		if msgs := validation.IsDNS1123Subdomain(in.ClusterDomain); len(msgs) > 0 {
			errs = append(errs, fmt.Sprintf("ClusterDomain %q is not a DNS name: %s", in.ClusterDomain, strings.Join(msgs, ", ")))
		}
	}
	return wait.Invalid("smoke.Run", errs)
}

func (in *Input) defaults() {
	if in.ClusterName == "" && in.Cluster != nil {
		in.ClusterName = in.Cluster.Kubeconfig
	}
	if in.ClusterDomain == "" {
		in.ClusterDomain = DefaultClusterDomain
	}
	if in.Prefix == "" {
		in.Prefix = "[smoke]"
	}
}
