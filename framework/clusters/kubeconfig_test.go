package clusters

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tkg-e2e/harness/framework/kube"
)

const unreachableKubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`

// WaitAPI reads Cluster API's <name>-kubeconfig Secret and says which step it
// is waiting for when the time runs out.
func TestWaitAPISaysWhatItWaitsFor(t *testing.T) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "wl-kubeconfig"},
		Data: map[string][]byte{"value": []byte(unreachableKubeconfig)}}
	for name, tc := range map[string]struct {
		objects []*corev1.Secret
		want    string
	}{
		"no Secret":         {nil, "no kubeconfig Secret yet"},
		"API not answering": {[]*corev1.Secret{secret}, "kubeconfig Secret exists, API server not ready"},
	} {
		t.Run(name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(kube.Scheme())
			for _, o := range tc.objects {
				b = b.WithObjects(o.DeepCopy())
			}
			path := filepath.Join(t.TempDir(), "wl.kubeconfig")
			_, err := WaitAPI(context.Background(), WaitAPIInput{Management: &kube.Cluster{Client: b.Build()}, Namespace: "ns", Name: "wl",
				KubeconfigPath: path, Timeout: 300 * time.Millisecond, Interval: 50 * time.Millisecond})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v does not say %q", err, tc.want)
			}
		})
	}
}
