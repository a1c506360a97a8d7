package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	capiyaml "sigs.k8s.io/cluster-api/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/wait"
)

// FieldOwner is the server-side apply field manager of everything the harness applies.
const FieldOwner = "tkg-e2e-harness"

// ReadManifest reads a manifest from a local path or an http(s) URL, so the
// same config works with the offline kit's files and with release URLs.
func ReadManifest(ctx context.Context, pathOrURL string) ([]byte, error) {
	if pathOrURL == "" {
		return nil, errors.New("manifest path or URL is empty")
	}
	if !strings.HasPrefix(pathOrURL, "http://") && !strings.HasPrefix(pathOrURL, "https://") {
		b, err := os.ReadFile(strings.TrimPrefix(pathOrURL, "file://"))
		if err != nil {
			return nil, fmt.Errorf("reading manifest: %w", err)
		}
		return b, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, pathOrURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := (&http.Client{Timeout: 2 * time.Minute}).Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching manifest %s: %w", pathOrURL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching manifest %s: HTTP %s", pathOrURL, resp.Status)
	}
	return io.ReadAll(io.LimitReader(resp.Body, 64<<20))
}

// ParseManifest splits a multi-document YAML (or JSON) manifest into objects.
// Cluster API's splitter skips empty documents; on top of it, List kinds are
// expanded (kubectl apply accepts them) and a document without kind or
// apiVersion is an error here rather than a confusing one from the server.
func ParseManifest(manifest []byte) ([]*unstructured.Unstructured, error) {
	docs, err := capiyaml.ToUnstructured(manifest)
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	var out []*unstructured.Unstructured
	for i := range docs {
		u := &docs[i]
		if u.IsList() {
			list, err := u.ToList()
			if err != nil {
				return nil, fmt.Errorf("manifest object %d: %w", i+1, err)
			}
			for j := range list.Items {
				out = append(out, &list.Items[j])
			}
			continue
		}
		if u.GetKind() == "" || u.GetAPIVersion() == "" {
			return nil, fmt.Errorf("manifest object %d has no kind/apiVersion", i+1)
		}
		out = append(out, u)
	}
	return out, nil
}

// applyOrder puts CRDs and Namespaces first: the rest of a manifest usually needs them.
func applyOrder(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	rank := func(u *unstructured.Unstructured) int {
		switch u.GetKind() {
		case "CustomResourceDefinition":
			return 0
		case "Namespace":
			return 1
		}
		return 2
	}
	out := append([]*unstructured.Unstructured(nil), objs...)
	sort.SliceStable(out, func(i, j int) bool { return rank(out[i]) < rank(out[j]) })
	return out
}

// ApplyInput is the input of Apply.
type ApplyInput struct {
	// Cluster to apply to.
	Cluster *Cluster
	// Objects to apply (see ParseManifest).
	Objects []*unstructured.Unstructured
	// DefaultNamespace is set on namespaced objects that have none.
	DefaultNamespace string
	// What names the manifest in progress lines and errors, e.g. "CNI manifest on wl".
	What string
	// Timeout bounds the retries: right after `clusterctl init` webhooks refuse
	// connections, and CRDs applied a moment ago may not be served yet.
	Timeout  time.Duration
	Interval time.Duration
	Progress io.Writer
	Prefix   string
}

func (in ApplyInput) validate() error {
	var errs []string
	if in.Cluster == nil {
		errs = append(errs, "Cluster is nil (use kube.Connect)")
	}
	if len(in.Objects) == 0 {
		errs = append(errs, "Objects is empty (nothing to apply; check the manifest)")
	}
	if in.What == "" {
		errs = append(errs, "What is empty (say what is applied, for progress and errors)")
	}
	if in.Timeout <= 0 {
		errs = append(errs, "Timeout must be > 0 (set it from the config intervals)")
	}
	if len(errs) > 0 {
		return fmt.Errorf("kube.Apply: invalid input: %s", strings.Join(errs, "; "))
	}
	return nil
}

// Apply server-side applies every object, retrying the ones that fail until
// all are applied or the timeout passes. The state in progress lines and in the
// timeout error says how many are applied and which object failed how.
func Apply(ctx context.Context, in ApplyInput) error {
	if err := in.validate(); err != nil {
		return err
	}
	pending := applyOrder(in.Objects)
	total := len(pending)
	return wait.For(ctx, wait.Options{What: "apply " + in.What, Timeout: in.Timeout, Interval: in.Interval,
		Progress: in.Progress, Prefix: in.Prefix},
		func(ctx context.Context) (bool, string, error) {
			var failed []*unstructured.Unstructured
			var firstErr error
			for _, u := range pending {
				if err := ctx.Err(); err != nil {
					return false, "", err
				}
				if err := applyOne(ctx, in.Cluster.Client, u, in.DefaultNamespace); err != nil {
					// The API server's schema said no (422 Invalid): the
					// same object is refused again on every retry, so say
					// so now instead of at the end of the apply timeout.
					if apierrors.IsInvalid(err) {
						return false, fmt.Sprintf("%d/%d objects applied", total-len(pending), total),
							wait.Permanent(fmt.Errorf("%s is rejected by the API server's schema (retrying cannot help): %w", describe(u), err))
					}
					failed = append(failed, u)
					if firstErr == nil {
						firstErr = fmt.Errorf("%s: %w", describe(u), err)
					}
				}
			}
			pending = failed
			state := fmt.Sprintf("%d/%d objects applied", total-len(pending), total)
			if len(pending) == 0 {
				return true, state, nil
			}
			return false, state, firstErr
		})
}

func applyOne(ctx context.Context, c client.Client, u *unstructured.Unstructured, defaultNS string) error {
	obj := u.DeepCopy()
	if obj.GetNamespace() == "" && defaultNS != "" {
		namespaced, err := c.IsObjectNamespaced(obj)
		if err != nil {
			return err
		}
		if namespaced {
			obj.SetNamespace(defaultNS)
		}
	}
	// Fields the server owns must not be part of an apply request.
	unstructured.RemoveNestedField(obj.Object, "status")
	unstructured.RemoveNestedField(obj.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(obj.Object, "metadata", "resourceVersion")
	unstructured.RemoveNestedField(obj.Object, "metadata", "uid")
	unstructured.RemoveNestedField(obj.Object, "metadata", "managedFields")
	return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(FieldOwner), client.ForceOwnership)
}

func describe(u *unstructured.Unstructured) string {
	if u.GetNamespace() != "" {
		return fmt.Sprintf("%s %s/%s", u.GetKind(), u.GetNamespace(), u.GetName())
	}
	return fmt.Sprintf("%s %s", u.GetKind(), u.GetName())
}
