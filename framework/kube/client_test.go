package kube

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	kapppkgv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	kappdatav1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

const testKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u
  user: {token: t}
contexts:
- name: c
  context: {cluster: c, user: u}
current-context: c
`

func TestConnectDefaultsAndOptions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(testKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	k, err := Connect(path)
	if err != nil {
		t.Fatal(err)
	}
	if k.Config.Timeout != RequestTimeout || k.Config.QPS != 50 || k.Config.Burst != 100 || k.Config.Dial != nil || k.Dynamic == nil {
		t.Fatalf("defaults: timeout %s, qps %v, burst %d, dial set %v, dynamic %v", k.Config.Timeout, k.Config.QPS, k.Config.Burst, k.Config.Dial != nil, k.Dynamic)
	}
	k, err = Connect(path, WithRequestTimeout(3*time.Second), WithDialTimeout(time.Second), WithRateLimit(100, 200), WithUserAgent("ua"))
	if err != nil {
		t.Fatal(err)
	}
	if k.Config.Timeout != 3*time.Second || k.Config.QPS != 100 || k.Config.Burst != 200 || k.Config.Dial == nil || k.Config.UserAgent != "ua" {
		t.Fatalf("options not applied: %+v", k.Config)
	}
	if _, err := Connect(filepath.Join(t.TempDir(), "missing")); err == nil || !strings.Contains(err.Error(), "kubeconfig") {
		t.Fatalf("missing kubeconfig: %v", err)
	}
}

func TestSchemeServesEveryCaller(t *testing.T) {
	s := Scheme()
	for name, known := range map[string]bool{
		"Cluster":        s.Recognizes(clusterv1.GroupVersion.WithKind("Cluster")),
		"PackageInstall": s.Recognizes(kapppkgv1alpha1.SchemeGroupVersion.WithKind("PackageInstall")),
		"Package":        s.Recognizes(kappdatav1alpha1.SchemeGroupVersion.WithKind("Package")),
	} {
		if !known {
			t.Errorf("kube.Scheme does not know %s", name)
		}
	}
}
