package smoke

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tkg-e2e/harness/framework/kube"
)

func TestRunRejectsInvalidInputSayingHowToFixIt(t *testing.T) {
	full := &kube.Cluster{Client: fakeClient(), Clientset: nil}
	for _, tc := range []struct {
		name string
		in   Input
		want []string
	}{
		{"empty", Input{}, []string{"smoke.Run: invalid input:", "Cluster is nil", "Image is empty", `"busybox:1.35.0"`,
			"Timeout must be > 0 (set it from the config intervals)", "Poll must be > 0"}},
		{"no clientset", Input{Cluster: full, Image: "busybox:1.35.0", Timeout: time.Minute, Poll: time.Second},
			[]string{"Cluster has no Client or Clientset: build it with kube.Connect"}},
		{"poll not below timeout", Input{Cluster: fakeCluster(), Image: "busybox", Timeout: time.Second, Poll: time.Second},
			[]string{"Poll (1s) must be shorter than Timeout (1s)"}},
		{"bad domain and image", Input{Cluster: fakeCluster(), Image: "busybox 1.35", Timeout: time.Minute, Poll: time.Second, ClusterDomain: "Cluster_Local"},
			[]string{`Image "busybox 1.35" contains whitespace`, `ClusterDomain "Cluster_Local" is not a DNS name`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Run(context.Background(), tc.in)
			if err == nil || res != nil {
				t.Fatalf("accepted: res=%v", res)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
		})
	}
	good := Input{Cluster: fakeCluster(), Image: "busybox:1.35.0", Timeout: time.Minute, Poll: time.Second}
	if err := good.validate(); err != nil {
		t.Fatalf("valid input rejected: %v", err)
	}
	good.defaults()
	if good.ClusterDomain != "cluster.local" || good.Prefix != "[smoke]" {
		t.Errorf("defaults: %+v", good)
	}
}
