package clusters

import (
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/cluster-api/test/framework/clusterctl"
	"sigs.k8s.io/cluster-api/test/infrastructure/container"

	"github.com/tkg-e2e/harness/framework/run"
)

func TestMachinesSummarySaysWhichMachineIsBehind(t *testing.T) {
	ok, state := MachinesSummary([]Machine{
		{Name: "mgmt-cp-x", Phase: "Running", NodeName: "mgmt-cp-x"},
		{Name: "mgmt-md-0-x", Phase: "Provisioning", Problem: "BootstrapConfigReady: waiting for control plane"},
	}, 2)
	if ok != 1 || state != "1/2 machines Running with a node: mgmt-md-0-x Provisioning (BootstrapConfigReady: waiting for control plane)" {
		t.Fatalf("ok=%d state=%q", ok, state)
	}
	ok, state = MachinesSummary([]Machine{{Name: "a", Phase: "Running"}}, 2)
	if ok != 0 || !strings.Contains(state, "1 of 2 machines exist") || !strings.Contains(state, "a Running (no nodeRef yet)") {
		t.Fatalf("ok=%d state=%q", ok, state)
	}
}

func TestCreateValidatesInput(t *testing.T) {
	_, err := Create(t.Context(), CreateInput{Spec: Spec{Name: "Bad_Name", KubernetesVersion: "1.33", ControlPlaneMachineCount: 2}, Role: "x"})
	for _, want := range []string{"not a lower-case DNS label", "Namespace is empty", "must look like v1.33.1", "Flavor is empty",
		"must be odd", `Role "x"`, "ManagementKubeconfig is empty", "KubeconfigPath is empty", "State is nil", "Timeouts"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
}

func TestProvisionNamesEachMissingTimeout(t *testing.T) {
	in := ProvisionInput{CreateInput: CreateInput{Spec: Spec{InfrastructureProvider: "docker:v1.14.0"}, Role: RoleManagement},
		Images: []clusterctl.ContainerImage{{Name: "busybox:1.35.0"}}, KappControllerManifest: "kapp.yaml"}
	_, err := Provision(t.Context(), in)
	for _, want := range []string{"clusters.Create: invalid input", "Timeouts.Apply must be > 0", "Timeouts.ClusterAvailable must be > 0",
		"clusters.Provision: invalid input", "Timeouts.LoadImages must be > 0", "Timeouts.ProvidersInit must be > 0",
		"Timeouts.ProvidersReady must be > 0", "Timeouts.KappControllerApply must be > 0", "Timeouts.KappControllerAvailable must be > 0",
		"Timeouts.KappControllerAPIService must be > 0", "Providers.Infrastructure is empty"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
	// A workload cluster of another provider needs neither image nor provider timeouts.
	in = ProvisionInput{CreateInput: CreateInput{Spec: Spec{InfrastructureProvider: "vsphere"}, Role: RoleWorkload},
		Images: []clusterctl.ContainerImage{{Name: "busybox:1.35.0"}}}
	if err := in.validate(); err != nil {
		t.Errorf("workload on vsphere: %v", err)
	}
}

func TestDeleterRemovesTheContainersOfASelfHostedCluster(t *testing.T) {
	rt, err := container.NewFakeClient()
	if err != nil {
		t.Fatal(err)
	}
	ctx := container.RuntimeInto(t.Context(), rt)
	del := Deleter(time.Second, time.Second, nil, "")
	how, err := del(ctx, run.Resource{Kind: ResourceKind, Namespace: "ns", Name: "h4e-mgmt",
		Attributes: map[string]string{AttrManagedBy: "/nonexistent/kubeconfig", AttrSelfHosted: "true"}})
	if err != nil || how != "removed 0 containers by label io.x-k8s.kind.cluster=h4e-mgmt (self-hosted)" {
		t.Fatalf("how %q, err %v", how, err)
	}
	// A management cluster that does not answer: its containers go instead.
	how, err = del(ctx, run.Resource{Kind: ResourceKind, Namespace: "ns", Name: "h4e-wl",
		Attributes: map[string]string{AttrManagedBy: "/nonexistent/kubeconfig"}})
	if err != nil || how != "removed 0 containers by label io.x-k8s.kind.cluster=h4e-wl" {
		t.Fatalf("how %q, err %v", how, err)
	}
}
