package suites

import (
	"slices"
	"testing"

	"github.com/tkg-e2e/harness/framework/artifacts/cluster"
	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/infrastructure"
)

func TestNodeSSHInputOnlyForCAPVClusters(t *testing.T) {
	cfg := &config.Config{}
	cfg.VSphere.NodeSSH = config.NodeSSH{User: "capv", KeyFile: "/keys/id_ed25519"}
	env := &Env{Run: &Run{Config: cfg}}
	kind := &Cluster{Role: RoleBootstrap, Name: "kind", Kubeconfig: "/k/kind", Infrastructure: infrastructure.KindCluster}
	mgmt := &Cluster{Role: RoleManagement, Name: "mgmt", Namespace: "tkg-system", Kubeconfig: "/k/mgmt", Infrastructure: infrastructure.Parse("vsphere:v1.15.0")}
	wl := &Cluster{Role: RoleWorkload, Name: "wl", Namespace: "default", Kubeconfig: "/k/wl", Infrastructure: infrastructure.VSphere}
	all := []*Cluster{kind, mgmt, wl}

	var in cluster.Input
	nodeSSHInput(env.Run, kind, all, &in)
	if in.SSH.KeyFile != "" || in.MachineKubeconfigs != nil {
		t.Errorf("the kind cluster got SSH input: %+v", in)
	}
	in = cluster.Input{}
	nodeSSHInput(env.Run, wl, all, &in)
	if in.SSH.User != "capv" || in.SSH.KeyFile != "/keys/id_ed25519" || in.Namespace != "default" ||
		!slices.Equal(in.MachineKubeconfigs, []string{"/k/kind", "/k/mgmt", "/k/wl"}) {
		t.Errorf("workload input: %+v", in)
	}
	in = cluster.Input{}
	nodeSSHInput(env.Run, mgmt, all, &in)
	if in.SSH.KeyFile == "" || in.Namespace != "tkg-system" {
		t.Errorf("management input (provider with a version): %+v", in)
	}
}
