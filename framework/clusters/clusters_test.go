package clusters

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/test/framework/clusterctl"
	"sigs.k8s.io/cluster-api/test/infrastructure/container"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tkg-e2e/harness/framework/infrastructure"
	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/node"
	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/internal/testutil"
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
	in := ProvisionInput{CreateInput: CreateInput{Spec: Spec{Infrastructure: infrastructure.Parse("docker:v1.14.0")}, Role: RoleManagement},
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
	in = ProvisionInput{CreateInput: CreateInput{Spec: Spec{Infrastructure: infrastructure.VSphere}, Role: RoleWorkload},
		Images: []clusterctl.ContainerImage{{Name: "busybox:1.35.0"}}}
	if err := in.validate(); err != nil {
		t.Errorf("workload on vsphere: %v", err)
	}
}

// fakeDocker is a context whose Runtime is Cluster API's fake (its delete
// calls logged) and whose Inventory lists cs until the fake deletes them.
func fakeDocker(t *testing.T, cs ...node.ContainerInfo) (context.Context, *container.FakeRuntime) {
	rt, fake := testutil.FakeContainers(t)
	inv := &node.FakeInventory{Runtime: fake, Containers: cs}
	return node.InventoryInto(container.RuntimeInto(t.Context(), rt), inv), fake
}

func TestDeleterRemovesTheRunsContainersOfASelfHostedCluster(t *testing.T) {
	lbl := func(c string) map[string]string {
		return map[string]string{node.ClusterLabel: c, node.RoleLabel: "control-plane"}
	}
	old := time.Now().Add(-time.Hour)
	ctx, fake := fakeDocker(t,
		node.ContainerInfo{ID: "id-mgmt", Name: "h4e-mgmt-cp", Created: old, Labels: lbl("h4e-mgmt")},
		node.ContainerInfo{ID: "id-wl", Name: "h4e-wl-cp", Created: old, Labels: lbl("h4e-wl")},
		node.ContainerInfo{ID: "id-other", Name: "h4e-wl-cp-other", Created: old, Labels: lbl("h4e-wl")})
	del := Deleter(time.Second, time.Second, nil, "")
	how, err := del(ctx, run.Resource{Kind: ResourceKind, Namespace: "ns", Name: "h4e-mgmt",
		Attributes: map[string]string{AttrManagedBy: "/nonexistent/kubeconfig", AttrSelfHosted: "true", node.AttrContainers: "h4e-mgmt-cp=id-mgmt"}})
	if err != nil || how != "removed the run's 1 containers by ID (h4e-mgmt-cp) (self-hosted)" {
		t.Fatalf("how %q, err %v", how, err)
	}
	// A management cluster that does not answer: the run's containers go
	// instead, and a container of the same label that is not the run's stays.
	how, err = del(ctx, run.Resource{Kind: ResourceKind, Namespace: "ns", Name: "h4e-wl",
		Attributes: map[string]string{AttrManagedBy: "/nonexistent/kubeconfig", node.AttrContainers: "h4e-wl-cp=id-wl"}})
	if err != nil || !strings.HasPrefix(how, "removed the run's 1 containers by ID (h4e-wl-cp); container h4e-wl-cp-other") ||
		!strings.Contains(how, "left alone") {
		t.Fatalf("how %q, err %v", how, err)
	}
	if got := strings.Join(fake.DeleteContainerCalls(), ","); got != "id-mgmt,id-wl" {
		t.Fatalf("deleted %s", got)
	}
}

// cleanup.selfHosted: removeContainers hands DeleterWith RemoveContainers:
// the self-hosted cluster's recorded containers go by ID, the how says why,
// and a container of the same label that is not the run's stays.
func TestRemoveContainersDeletesASelfHostedClusterByIDAndSaysWhy(t *testing.T) {
	lbl := func(c string) map[string]string {
		return map[string]string{node.ClusterLabel: c, node.RoleLabel: "control-plane"}
	}
	old := time.Now().Add(-time.Hour)
	ctx, fake := fakeDocker(t,
		node.ContainerInfo{ID: "id-mgmt-cp", Name: "h4e-mgmt-cp", Created: old, Labels: lbl("h4e-mgmt")},
		node.ContainerInfo{ID: "id-mgmt-lb", Name: "h4e-mgmt-lb", Created: old, Labels: map[string]string{node.ClusterLabel: "h4e-mgmt", node.RoleLabel: "load-balancer"}},
		node.ContainerInfo{ID: "id-decoy", Name: "h4e-mgmt-decoy", Created: old, Labels: lbl("h4e-mgmt")})
	del := DeleterWith(time.Second, time.Second, nil, "", RemoveContainers("because cleanup.selfHosted is removeContainers"), nil)
	how, err := del(ctx, run.Resource{Kind: ResourceKind, Namespace: "tkg-system", Name: "h4e-mgmt", Kubeconfig: "/nonexistent/mgmt",
		Attributes: map[string]string{AttrManagedBy: "/nonexistent/mgmt", AttrSelfHosted: "true",
			node.AttrContainers: "h4e-mgmt-cp=id-mgmt-cp,h4e-mgmt-lb=id-mgmt-lb"}})
	if err != nil {
		t.Fatal(err)
	}
	want := "removed the run's 2 containers by ID (h4e-mgmt-cp, h4e-mgmt-lb) (self-hosted; because cleanup.selfHosted is removeContainers); container h4e-mgmt-decoy"
	if !strings.HasPrefix(how, want) || !strings.Contains(how, "left alone") {
		t.Fatalf("how %q, want it to start %q and report the decoy left alone", how, want)
	}
	if got := strings.Join(slices.Sorted(slices.Values(fake.DeleteContainerCalls())), ","); got != "id-mgmt-cp,id-mgmt-lb" {
		t.Fatalf("deleted %s, want only the run's two containers", got)
	}
}

// cleanup.managed: removeContainers hands DeleterWith RemoveManaged: a
// workload cluster's recorded containers go by ID, without asking its
// management cluster, the how says why, and a decoy of the label stays.
func TestRemoveManagedDeletesAWorkloadClusterByIDAndSaysWhy(t *testing.T) {
	lbl := func(c string) map[string]string {
		return map[string]string{node.ClusterLabel: c, node.RoleLabel: "control-plane"}
	}
	old := time.Now().Add(-time.Hour)
	ctx, fake := fakeDocker(t,
		node.ContainerInfo{ID: "id-wl-cp", Name: "h4e-wl-cp", Created: old, Labels: lbl("h4e-wl")},
		node.ContainerInfo{ID: "id-decoy", Name: "h4e-wl-decoy", Created: old, Labels: lbl("h4e-wl")})
	var progress strings.Builder
	del := DeleterWith(time.Second, time.Second, &progress, "", nil, RemoveManaged("because cleanup.managed is removeContainers"))
	how, err := del(ctx, run.Resource{Kind: ResourceKind, Namespace: "default", Name: "h4e-wl",
		Attributes: map[string]string{AttrManagedBy: "/nonexistent/mgmt", node.AttrContainers: "h4e-wl-cp=id-wl-cp"}})
	if err != nil {
		t.Fatal(err)
	}
	want := "removed the run's 1 containers by ID (h4e-wl-cp) (because cleanup.managed is removeContainers); container h4e-wl-decoy"
	if !strings.HasPrefix(how, want) || !strings.Contains(how, "left alone") {
		t.Fatalf("how %q, want it to start %q and report the decoy left alone", how, want)
	}
	if strings.Contains(progress.String(), "cannot delete through") {
		t.Errorf("the management cluster was asked first: %s", progress.String())
	}
	if got := strings.Join(fake.DeleteContainerCalls(), ","); got != "id-wl-cp" {
		t.Fatalf("deleted %s, want only the run's container", got)
	}
}

func TestRecordedUIDOnlyWhileHeldWhereRecorded(t *testing.T) {
	r := run.Resource{Attributes: map[string]string{AttrClusterUID: "u1", AttrClusterUIDIn: "/kind", AttrManagedBy: "/kind"}}
	if recordedUID(r) != "u1" {
		t.Fatal("the recorded UID is not checked")
	}
	// After clusterctl move the object is recreated with another UID.
	r.Attributes[AttrManagedBy] = "/mgmt"
	if recordedUID(r) != "" {
		t.Fatal("a moved Cluster's old UID would refuse its deletion")
	}
}

// A Cluster of the run's name whose UID is not the one the run recorded is
// someone else's: Delete refuses it and leaves it.
func TestDeleteLeavesAClusterOfAnotherUID(t *testing.T) {
	c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "h4e-wl", UID: "theirs"}}
	cl := fake.NewClientBuilder().WithScheme(kube.Scheme()).WithObjects(c).Build()
	err := Delete(t.Context(), DeleteInput{Management: &kube.Cluster{Client: cl}, Namespace: "ns", Name: "h4e-wl", UID: "ours",
		Timeout: time.Second, Interval: 100 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "not this run's, left alone") {
		t.Fatalf("err %v", err)
	}
	if err := cl.Get(t.Context(), client.ObjectKeyFromObject(c), &clusterv1.Cluster{}); err != nil {
		t.Fatalf("the other Cluster was deleted: %v", err)
	}
}
