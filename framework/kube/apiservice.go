package kube

import (
	"context"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/wait"
)

// APIServiceInput is the input of WaitAPIServiceAvailable.
type APIServiceInput struct {
	Cluster *Cluster
	// Name of the APIService, e.g. v1alpha1.data.packaging.carvel.dev.
	Name     string
	Timeout  time.Duration
	Interval time.Duration
	Progress io.Writer
	Prefix   string
}

// APIServiceGVK is read as unstructured: kube.Scheme has no apiregistration
// types (kube-aggregator's module trails the other k8s.io modules).
var APIServiceGVK = schema.GroupVersionKind{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"}

// WaitAPIServiceAvailable waits for an aggregated APIService to report
// Available; the state carries its condition reason and message (e.g.
// "FailedDiscoveryCheck: ... 404" when the node network sends early ClusterIP
// traffic astray).
func WaitAPIServiceAvailable(ctx context.Context, in APIServiceInput) error {
	if in.Cluster == nil || in.Name == "" || in.Timeout <= 0 {
		return fmt.Errorf("kube.WaitAPIServiceAvailable: invalid input: Cluster, Name and Timeout (> 0) are required")
	}
	return wait.For(ctx, wait.Options{What: "APIService " + in.Name + " Available", Timeout: in.Timeout,
		Interval: in.Interval, Progress: in.Progress, Prefix: in.Prefix},
		func(ctx context.Context) (bool, string, error) {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(APIServiceGVK)
			if err := in.Cluster.Client.Get(ctx, client.ObjectKey{Name: in.Name}, u); err != nil {
				return false, "", err
			}
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			for _, c := range conds {
				m, _ := c.(map[string]any)
				if m["type"] != "Available" {
					continue
				}
				state := fmt.Sprintf("Available=%v", m["status"])
				if m["status"] != "True" {
					state += fmt.Sprintf(" (%v: %v)", m["reason"], truncate(fmt.Sprint(m["message"]), 200))
				}
				return m["status"] == "True", state, nil
			}
			return false, "no Available condition yet", nil
		})
}
