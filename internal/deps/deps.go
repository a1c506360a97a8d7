//go:build deps

// Package deps pins the libraries the harness is built on, so `go mod tidy`
// keeps them while the packages that use them are being written.
package deps

import (
	_ "github.com/onsi/ginkgo/v2"
	_ "github.com/onsi/gomega"
	_ "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	_ "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	_ "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	_ "github.com/vmware/govmomi/ovf/importer"
	_ "github.com/vmware/govmomi/simulator"
	_ "sigs.k8s.io/cluster-api/api/core/v1beta2"
	_ "sigs.k8s.io/cluster-api/cmd/clusterctl/client"
	_ "sigs.k8s.io/cluster-api/test/framework"
	_ "sigs.k8s.io/cluster-api/test/framework/bootstrap"
	_ "sigs.k8s.io/cluster-api/test/framework/clusterctl"
	_ "sigs.k8s.io/controller-runtime/pkg/client"
	_ "sigs.k8s.io/e2e-framework/klient/wait"
	_ "sigs.k8s.io/kind/pkg/cluster"
	_ "sigs.k8s.io/yaml"
)
