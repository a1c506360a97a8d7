package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tkg-e2e/harness/framework/artifacts"
	"github.com/tkg-e2e/harness/framework/kube"
)

var machinesGVR = schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta2", Resource: "machines"}

// clusterNameLabel is set by Cluster API on every Machine of a cluster.
const clusterNameLabel = "cluster.x-k8s.io/cluster-name"

// machinesItem lists the cluster's Machines in the clusters that may hold
// them (Input.MachineKubeconfigs: the management cluster, or the bootstrap
// cluster before the move). Their addresses reach a VM whose Node never
// registered, and every VM when the cluster's own API is down. The result
// is the union over the clusters that answered; the item fails only when
// none did.
func (c *collection) machinesItem(found *atomic.Pointer[[]unstructured.Unstructured]) artifacts.Item {
	return artifacts.Item{Name: "list Machines for node addresses", Run: func(ctx context.Context) error {
		var (
			mu   sync.Mutex
			errs []error
			seen = map[string]bool{}
			out  []unstructured.Unstructured
			wg   sync.WaitGroup
		)
		for _, kc := range c.in.MachineKubeconfigs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				items, err := listMachines(ctx, kc, c.in.Namespace, c.in.Name, c.in.ItemTimeout)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", kc, err))
					return
				}
				for _, m := range items {
					if k := m.GetNamespace() + "/" + m.GetName(); !seen[k] {
						seen[k] = true
						out = append(out, m)
					}
				}
			}()
		}
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		found.Store(&out)
		if len(errs) == len(c.in.MachineKubeconfigs) {
			return errors.Join(errs...)
		}
		return nil
	}}
}

func listMachines(ctx context.Context, kubeconfig, namespace, cluster string, timeout time.Duration) ([]unstructured.Unstructured, error) {
	cl, err := kube.Connect(kubeconfig, kube.WithRequestTimeout(timeout), kube.WithDialTimeout(timeout/4),
		kube.WithUserAgent("tkg-e2e-harness-artifacts"))
	if err != nil {
		return nil, err
	}
	list, err := cl.Dynamic.Resource(machinesGVR).Namespace(namespace).List(ctx, metav1.ListOptions{LabelSelector: clusterNameLabel + "=" + cluster})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}
