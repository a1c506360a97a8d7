package clusters

import (
	"strings"
	"testing"

	"sigs.k8s.io/cluster-api/test/framework/clusterctl"
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

func TestCreateNeedsALoadTimeoutWithImages(t *testing.T) {
	_, err := Create(t.Context(), CreateInput{Images: []clusterctl.ContainerImage{{Name: "busybox:1.35.0"}}})
	if err == nil || !strings.Contains(err.Error(), "Timeouts.LoadImages must be > 0 when Images are given") {
		t.Fatalf("got %v", err)
	}
}
