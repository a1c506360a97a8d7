package clusters

import (
	"context"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/wait"
)

// KappControllerAPIService is the aggregated API kapp-controller serves
// Packages through; `kubectl get packages` fails until it is Available.
const KappControllerAPIService = "v1alpha1.data.packaging.carvel.dev"

// KappControllerInput is the input of InstallKappController.
type KappControllerInput struct {
	Cluster *kube.Cluster
	// Manifest is the kapp-controller release manifest, path or URL (the kit's
	// $KAPP_CONTROLLER_MANIFEST, or the upstream release.yml).
	Manifest string
	// ClusterName is used in messages.
	ClusterName  string
	ApplyTimeout time.Duration
	// AvailableTimeout bounds the wait for its Deployments.
	AvailableTimeout time.Duration
	// APIServiceTimeout bounds the wait for each APIService it defines.
	APIServiceTimeout time.Duration
	Interval          time.Duration
	Progress          io.Writer
	Prefix            string
}

// InstallKappController applies the kapp-controller manifest and waits for its
// Deployments to be Available and for every APIService it defines (notably
// v1alpha1.data.packaging.carvel.dev) to be Available.
func InstallKappController(ctx context.Context, in KappControllerInput) error {
	var errs []string
	if in.Cluster == nil {
		errs = append(errs, "Cluster is nil")
	}
	if in.Manifest == "" {
		errs = append(errs, "Manifest is empty (path or URL of kapp-controller's release manifest, e.g. $KAPP_CONTROLLER_MANIFEST)")
	}
	errs = append(errs, wait.Timeouts{"ApplyTimeout": in.ApplyTimeout, "AvailableTimeout": in.AvailableTimeout,
		"APIServiceTimeout": in.APIServiceTimeout}.Missing("")...)
	if err := wait.Invalid("clusters.InstallKappController", errs); err != nil {
		return err
	}
	raw, err := kube.ReadManifest(ctx, in.Manifest)
	if err != nil {
		return fmt.Errorf("kapp-controller manifest: %w", err)
	}
	objs, err := kube.ParseManifest(raw)
	if err != nil {
		return fmt.Errorf("kapp-controller manifest %s: %w", in.Manifest, err)
	}
	var deps []types.NamespacedName
	var apiServices []string
	for _, o := range objs {
		switch o.GetKind() {
		case "Deployment":
			deps = append(deps, types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()})
		case "APIService":
			apiServices = append(apiServices, o.GetName())
		}
	}
	if len(deps) == 0 {
		return fmt.Errorf("kapp-controller manifest %s has no Deployment: is it the right file?", in.Manifest)
	}
	on := in.ClusterName
	if on == "" {
		on = in.Cluster.Kubeconfig
	}
	if err := kube.Apply(ctx, kube.ApplyInput{Cluster: in.Cluster, Objects: objs, What: "kapp-controller on " + on,
		Timeout: in.ApplyTimeout, Interval: in.Interval, Progress: in.Progress, Prefix: in.Prefix}); err != nil {
		return err
	}
	if err := kube.WaitDeploymentsAvailable(ctx, kube.DeploymentsInput{Cluster: in.Cluster, Names: deps, What: "kapp-controller on " + on,
		Timeout: in.AvailableTimeout, Interval: in.Interval, Progress: in.Progress, Prefix: in.Prefix}); err != nil {
		return err
	}
	for _, a := range apiServices {
		if err := kube.WaitAPIServiceAvailable(ctx, kube.APIServiceInput{Cluster: in.Cluster, Name: a, Timeout: in.APIServiceTimeout,
			Interval: in.Interval, Progress: in.Progress, Prefix: in.Prefix}); err != nil {
			return err
		}
	}
	return nil
}
