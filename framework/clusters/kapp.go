package clusters

import (
	"context"
	"fmt"
	"io"

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
	ClusterName string
	// Apply bounds and paces applying the manifest.
	Apply wait.Interval
	// Available bounds and paces the wait for its Deployments.
	Available wait.Interval
	// APIService bounds and paces the wait for each APIService it defines.
	APIService wait.Interval
	Progress   io.Writer
	Prefix     string
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
	errs = append(errs, wait.Timeouts{"Apply": in.Apply.Timeout, "Available": in.Available.Timeout,
		"APIService": in.APIService.Timeout}.Missing("")...)
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
		Timeout: in.Apply.Timeout, Interval: in.Apply.Poll, Progress: in.Progress, Prefix: in.Prefix}); err != nil {
		return err
	}
	if err := kube.WaitDeploymentsAvailable(ctx, kube.DeploymentsInput{Cluster: in.Cluster, Names: deps, What: "kapp-controller on " + on,
		Timeout: in.Available.Timeout, Interval: in.Available.Poll, Grace: in.Available.Grace, Progress: in.Progress, Prefix: in.Prefix}); err != nil {
		return err
	}
	for _, a := range apiServices {
		if err := kube.WaitAPIServiceAvailable(ctx, kube.APIServiceInput{Cluster: in.Cluster, Name: a, Timeout: in.APIService.Timeout,
			Interval: in.APIService.Poll, Progress: in.Progress, Prefix: in.Prefix}); err != nil {
			return err
		}
	}
	return nil
}
