package cluster

import (
	"context"
	"fmt"
	"path"
	"sort"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/tkg-e2e/harness/framework/artifacts"
	"github.com/tkg-e2e/harness/framework/kube"
)

// dumpItem lists one kind across all namespaces and writes the objects as a
// multi-document YAML file (one file per kind keeps the index readable where
// a file per object would make hundreds). The list is kept for the findings.
func (c *collection) dumpItem(cl *kube.Cluster, k kind) artifacts.Item {
	rel := path.Join(c.folder, k.file())
	name := "dump " + k.gvr.Resource
	if k.gvr.Group != "" {
		name += "." + k.gvr.Group
	}
	return artifacts.Item{Name: name, Run: func(ctx context.Context) error {
		list, err := cl.Dynamic.Resource(k.gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		items := list.Items
		sort.Slice(items, func(i, j int) bool {
			if items[i].GetNamespace() != items[j].GetNamespace() {
				return items[i].GetNamespace() < items[j].GetNamespace()
			}
			return items[i].GetName() < items[j].GetName()
		})
		f, err := c.w.Create(rel)
		if err != nil {
			return err
		}
		if k.gvr == secretsKind.gvr {
			c.w.AddSecrets(secretValues(items)...)
		}
		for i := range items {
			obj := &items[i]
			// List items come without their type; a dump without kind is hard to read.
			obj.SetAPIVersion(k.gvr.GroupVersion().String())
			obj.SetKind(k.kind)
			sanitize(obj)
			b, err := yaml.Marshal(obj.Object)
			if err != nil {
				_ = f.Close()
				return fmt.Errorf("%s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
			}
			_, _ = f.Write([]byte("---\n"))
			_, _ = f.Write(b)
		}
		if err := f.Close(); err != nil {
			return err
		}
		c.inv.put(k.gvr.Resource, k.gvr.Group, items)
		return nil
	}}
}

// inventory holds the listed objects by resource.group for the findings.
type inventory struct {
	mu   sync.Mutex
	objs map[string][]unstructured.Unstructured
}

func newInventory() *inventory {
	return &inventory{objs: map[string][]unstructured.Unstructured{}}
}

func (i *inventory) put(resource, group string, items []unstructured.Unstructured) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.objs[resource+"."+group] = items
}

func (i *inventory) get(resource, group string) []unstructured.Unstructured {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.objs[resource+"."+group]
}
