package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/kube"
)

// ProviderLabel is the label clusterctl puts on everything it installs
// (providers and cert-manager).
const ProviderLabel = "clusterctl.cluster.x-k8s.io"

// HealthInput is the input of Health.
type HealthInput struct {
	// Name of the kind (or CAPD) cluster, for its containers.
	Name string
	Kube *kube.Cluster
}

// HealthReport is what Health saw.
type HealthReport struct {
	Containers []string
	APIReady   bool
	Nodes      string
	// Providers summarizes clusterctl-installed Deployments ("7/7 Available").
	Providers string
	Problems  []string
}

func (r *HealthReport) String() string {
	s := fmt.Sprintf("containers [%s], API ready=%v, %s, providers %s", strings.Join(r.Containers, ", "), r.APIReady, r.Nodes, r.Providers)
	if len(r.Problems) > 0 {
		s += "; problems: " + strings.Join(r.Problems, "; ")
	}
	return s
}

// Health checks once, without waiting, that a kind-style cluster is usable:
// its containers run, its API server is ready, its nodes are Ready and the
// Deployments clusterctl installed (if any) are Available. The error lists
// every problem found.
func Health(ctx context.Context, in HealthInput) (*HealthReport, error) {
	if in.Name == "" || in.Kube == nil {
		return nil, errors.New("bootstrap.Health: invalid input: Name and Kube are required")
	}
	rep := &HealthReport{}
	cs, err := ClusterContainers(ctx, in.Name)
	if err != nil {
		return nil, err
	}
	if len(cs) == 0 {
		rep.Problems = append(rep.Problems, fmt.Sprintf("no containers labelled %s=%s", ClusterLabel, in.Name))
	}
	for _, c := range cs {
		rep.Containers = append(rep.Containers, c.Name+" "+c.State)
		if c.State != "running" {
			rep.Problems = append(rep.Problems, fmt.Sprintf("container %s is %s", c.Name, c.State))
		}
	}
	if err := in.Kube.Ready(ctx); err != nil {
		rep.Problems = append(rep.Problems, "API server: "+err.Error())
		return rep, fmt.Errorf("cluster %s is not healthy: %s", in.Name, strings.Join(rep.Problems, "; "))
	}
	rep.APIReady = true
	nodes := corev1.NodeList{}
	if err := in.Kube.Client.List(ctx, &nodes); err != nil {
		rep.Problems = append(rep.Problems, "listing nodes: "+err.Error())
	} else {
		ready, notReady := kube.NodesSummary(nodes.Items)
		rep.Nodes = fmt.Sprintf("%d/%d nodes Ready", len(ready), len(nodes.Items))
		for _, n := range notReady {
			rep.Problems = append(rep.Problems, "node "+n)
		}
	}
	deps := appsv1.DeploymentList{}
	if err := in.Kube.Client.List(ctx, &deps, client.HasLabels{ProviderLabel}); err != nil {
		rep.Problems = append(rep.Problems, "listing provider Deployments: "+err.Error())
	} else {
		ok := 0
		for i := range deps.Items {
			if avail, why := kube.DeploymentAvailable(&deps.Items[i]); avail {
				ok++
			} else {
				rep.Problems = append(rep.Problems, fmt.Sprintf("Deployment %s/%s %s", deps.Items[i].Namespace, deps.Items[i].Name, why))
			}
		}
		rep.Providers = fmt.Sprintf("%d/%d Deployments Available", ok, len(deps.Items))
	}
	if len(rep.Problems) > 0 {
		return rep, fmt.Errorf("cluster %s is not healthy: %s", in.Name, strings.Join(rep.Problems, "; "))
	}
	return rep, nil
}

func listOpts(hasLabel string) metav1.ListOptions { return metav1.ListOptions{LabelSelector: hasLabel} }
