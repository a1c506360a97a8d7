package report

import (
	"strings"
	"testing"

	"github.com/tkg-e2e/harness/framework/artifacts"
	"github.com/tkg-e2e/harness/framework/tanzu"
)

func TestClassify(t *testing.T) {
	mgmt := func(f artifacts.ClusterFindings) []artifacts.ClusterFindings {
		f.Name, f.Role = "mgmt", "management"
		return []artifacts.ClusterFindings{f}
	}
	cases := []struct {
		name           string
		e              Evidence
		category       string
		rule           string
		reasonMentions string
	}{
		{"passed", Evidence{Passed: true}, None, "passed", ""},
		{"a rehearsal stop is not a failure, whatever the message mentions", Evidence{Stopped: true, Stage: "management", StageCategory: Provider,
			Message: "stopped at the rehearsal limit: cluster m reached applied -> VM cloned -> providerID; vcsim VMs boot no OS (vCenter, KubeadmControlPlane)"},
			None, "rehearsal-limit", "stand-in vCenter"},
		{"interrupted beats what the interruption left", Evidence{Stage: "management", StageCategory: Provider, Message: "interrupted: interrupted (Interrupted by User) while waiting for API server",
			Clusters: mgmt(artifacts.ClusterFindings{MachinesWithoutNodeRef: []artifacts.MachineFinding{{Name: "m"}}})}, Harness, "interrupted", "interrupted"},
		{"a lost lease beats the interruption it caused", Evidence{Stage: "ova", StageCategory: Infrastructure,
			Message: "lease lost: testbed-1 is no longer this run's (boskos update: HTTP 401: owner mismatch)\ninterrupted (lease lost: testbed-1) while waiting for the import"},
			Infrastructure, "lease-lost", "Boskos lease was lost"},
		{"the tanzu CLI's provider timeout, not its config file's name", Evidence{Stage: "management", StageCategory: Provider,
			Message:  "tanzu management-cluster create --file /h/tanzu-config-1/m.yaml -v 9 --yes failed (provider wait timeout) in phase management-providers: exit code 1; Error: unable to set up management cluster: timed out waiting for provider infrastructure-vsphere",
			Clusters: mgmt(artifacts.ClusterFindings{MachinesWithoutNodeRef: []artifacts.MachineFinding{{Name: "m"}}})}, Provider, "tanzu-provider-timeout", "provider wait timeout"},
		{"the tanzu CLI's package failure", Evidence{Stage: "management", StageCategory: Provider,
			Message: "tanzu management-cluster create --file f -v 9 --yes failed (package reconcile failure) in phase bootstrap-packages: exit code 1"}, Package, "tanzu-package-reconcile", "package reconcile failure"},
		{"the tanzu CLI's vCenter error", Evidence{Stage: "management", StageCategory: Provider,
			Message: "tanzu management-cluster create --file f -v 9 --yes failed (vCenter error) in phase prepare: exit code 1"}, Infrastructure, "tanzu-vcenter", "vCenter error"},
		{"the tanzu CLI hung", Evidence{Stage: "management", StageCategory: Provider,
			Message: "tanzu management-cluster create --file f -v 9 --yes failed (timeout) in phase management-create: killed after 1m30s"}, Provider, "tanzu-timeout", "timeout"},
		{"the tanzu CLI interrupted", Evidence{Stage: "management", StageCategory: Provider,
			Message: "tanzu management-cluster create --file f -v 9 --yes failed (interrupted) in phase bootstrap-setup: ended by interrupt"}, Harness, "tanzu-interrupted", "interrupted"},
		{"the tanzu CLI's unknown failure goes to the evidence, not to harness-input", Evidence{Stage: "workload", StageCategory: Provider,
			Message: "tanzu cluster create --file /h/tanzu-config-1/w.yaml -v 9 failed (unknown) in phase workload-control-plane: exit code 1; last relevant line: Error: unable to set up w"},
			Provider, "stage-hint", "workload"},
		{"panic beats everything", Evidence{Stage: "packages", StageCategory: Package, Message: "panic: runtime error: invalid memory address or nil pointer dereference",
			Clusters: mgmt(artifacts.ClusterFindings{FailedPackages: []artifacts.PackageFinding{{Name: "p"}}})}, Harness, "harness-panic", "panicked"},
		{"vcenter down", Evidence{Stage: "ova", StageCategory: Infrastructure, Message: "timed out", VSphere: &artifacts.VSphereFindings{APIError: "dial tcp 10.0.0.1:443: connect: connection refused"}},
			Infrastructure, "vcenter-unreachable", "vCenter"},
		{"docker down", Evidence{Stage: "bootstrap", StageCategory: Infrastructure, Clusters: []artifacts.ClusterFindings{{Name: "kind", DockerError: "Cannot connect to the Docker daemon at unix:///var/run/docker.sock"}}},
			Infrastructure, "docker-unreachable", "Docker"},
		{"vcenter task failed", Evidence{Stage: "ova", StageCategory: Infrastructure, VSphere: &artifacts.VSphereFindings{FailedTasks: []artifacts.VSphereTask{{Name: "ImportVApp", Entity: "tkg", Error: "FileAlreadyExists"}}}},
			Infrastructure, "vcenter-task-failed", "ImportVApp"},
		{"message names the infrastructure", Evidence{Stage: "ova", StageCategory: Infrastructure, Message: "import OVA: ServerFaultCode: insufficient disk space on datastore"},
			Infrastructure, "infrastructure-error", "datastore"},
		{"webhook refused", Evidence{Stage: "management", StageCategory: Provider, Message: `Internal error occurred: failed calling webhook "validation.dockercluster": connect: connection refused`},
			Provider, "webhook-unavailable", "webhook"},
		{"machine without infrastructure", Evidence{Stage: "management", StageCategory: Provider, Message: "timed out waiting for control plane",
			Clusters: mgmt(artifacts.ClusterFindings{MachinesWithoutNodeRef: []artifacts.MachineFinding{{Namespace: "default", Name: "m0", Phase: "Provisioning"}}})},
			Infrastructure, "machine-without-infrastructure", "m0"},
		{"missing CNI is the harness's", Evidence{Stage: "management", StageCategory: Provider,
			Clusters: mgmt(artifacts.ClusterFindings{NotReadyNodes: []artifacts.NodeFinding{{Name: "n0", Reason: "KubeletNotReady", Message: "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized"}}})},
			Harness, "node-without-cni", "CNI"},
		{"node not ready", Evidence{Stage: "workload", StageCategory: Provider, Clusters: mgmt(artifacts.ClusterFindings{NotReadyNodes: []artifacts.NodeFinding{{Name: "n0", Reason: "NodeStatusUnknown", Message: "Kubelet stopped posting node status."}}})},
			Infrastructure, "node-not-ready", "n0"},
		{"controller crash loop beats the package it breaks", Evidence{Stage: "packages", StageCategory: Package,
			Clusters: mgmt(artifacts.ClusterFindings{
				NotReadyPods:   []artifacts.PodFinding{{Namespace: "capi-system", Name: "capi-controller-manager-x", Reason: "CrashLoopBackOff", Restarts: 4}},
				FailedPackages: []artifacts.PackageFinding{{Name: "p"}}})},
			Provider, "controller-pod-failing", "capi-controller-manager"},
		{"machine never joined", Evidence{Stage: "workload", StageCategory: Provider,
			Clusters: mgmt(artifacts.ClusterFindings{MachinesWithoutNodeRef: []artifacts.MachineFinding{{Namespace: "default", Name: "m1", InfrastructureProvisioned: true, Message: "BootstrapConfigReady: waiting"}}})},
			Provider, "machine-not-bootstrapped", "m1"},
		{"api unreachable", Evidence{Stage: "workload", StageCategory: Provider, Clusters: []artifacts.ClusterFindings{{Name: "wl", Role: "workload", APIError: "dial tcp 172.18.0.5:6443: i/o timeout"}}},
			Infrastructure, "api-unreachable", "wl"},
		{"package failed", Evidence{Stage: "packages", StageCategory: Package, Message: "timed out waiting for PackageInstalls",
			Clusters: mgmt(artifacts.ClusterFindings{FailedPackages: []artifacts.PackageFinding{{Namespace: "tkg-system", Name: "cert-manager", Package: "cert-manager.tanzu.vmware.com", Message: "ytt: Error: schema violation"}}})},
			Package, "package-failed", "cert-manager"},
		{"unschedulable pod", Evidence{Stage: "placement", StageCategory: Placement,
			Clusters: mgmt(artifacts.ClusterFindings{NotReadyPods: []artifacts.PodFinding{{Namespace: "default", Name: "web", Unschedulable: true, Message: "0/2 nodes are available: 1 node(s) had untolerated taint"}}})},
			Placement, "pod-unschedulable", "web"},
		{"cluster not available", Evidence{Stage: "management", StageCategory: Provider,
			Clusters: mgmt(artifacts.ClusterFindings{ConditionTrees: []artifacts.ConditionTree{{Cluster: "default/mgmt", Text: "Cluster/mgmt  Available=False(NotAvailable)"}}})},
			Provider, "cluster-not-available", "default/mgmt"},
		{"package named in message", Evidence{Stage: "check", Message: "PackageInstall tkg-system/foo: ReconcileFailed"}, Package, "package-message", "PackageInstall"},
		{"placement stage", Evidence{Stage: "placement", StageCategory: Placement, Message: "pod coredns on node mgmt-md-0 but matrix wants control plane"}, Placement, "placement-message", "coredns"},
		{"provider named", Evidence{Stage: "check", Message: "KubeadmControlPlane default/mgmt did not reach 1 ready replica"}, Provider, "provider-message", "KubeadmControlPlane"},
		{"bad input", Evidence{Stage: "check", Message: "vsphere.password is required"}, Harness, "harness-input", "required"},
		{"stage hint", Evidence{Stage: "move", StageCategory: Provider, Message: "timed out after 5m"}, Provider, "stage-hint", "move"},
		{"nothing ran", Evidence{Stage: "none", Message: "exit status 1", NothingRan: true}, Harness, "nothing-ran", "before any stage"},
		{"fallback", Evidence{Stage: "check", Message: "expected 3 got 2"}, Harness, "fallback", "no rule"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Classify(tc.e)
			if got.Category != tc.category || got.Rule != tc.rule {
				t.Fatalf("got %s, want category %s rule %s", got, tc.category, tc.rule)
			}
			if tc.reasonMentions != "" && !strings.Contains(got.Reason, tc.reasonMentions) {
				t.Fatalf("reason %q does not mention %q", got.Reason, tc.reasonMentions)
			}
		})
	}
}

func TestEveryRuleIsExercised(t *testing.T) {
	// A rule no test reaches is a rule nobody knows works; keep the table above complete.
	tested := map[string]bool{"passed": true, "harness-panic": true, "vcenter-unreachable": true, "docker-unreachable": true,
		"vcenter-task-failed": true, "infrastructure-error": true, "webhook-unavailable": true, "machine-without-infrastructure": true,
		"node-without-cni": true, "node-not-ready": true, "controller-pod-failing": true, "machine-not-bootstrapped": true,
		"api-unreachable": true, "package-failed": true, "pod-unschedulable": true, "cluster-not-available": true, "package-message": true,
		"placement-message": true, "provider-message": true, "harness-input": true, "stage-hint": true, "nothing-ran": true, "interrupted": true, "rehearsal-limit": true, "lease-lost": true,
		"tanzu-provider-timeout": true, "tanzu-package-reconcile": true, "tanzu-vcenter": true, "tanzu-timeout": true, "tanzu-interrupted": true}
	for _, r := range rules {
		if !tested[r.name] {
			t.Errorf("rule %s has no case in TestClassify", r.name)
		}
	}
}

// The report matches the tanzu driver's failure kinds by their words; they
// must stay the library's.
func TestTanzuRuleKindsAreTheLibrarys(t *testing.T) {
	for _, k := range []tanzu.Kind{tanzu.KindProviderTimeout, tanzu.KindPackageReconcile, tanzu.KindVCenter, tanzu.KindTimeout, tanzu.KindInterrupted} {
		found := false
		for _, r := range rules {
			if strings.HasPrefix(r.name, "tanzu-") {
				if _, ok := r.match(Evidence{Message: "tanzu cluster create --file f failed (" + string(k) + ") in phase x"}); ok {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("no report rule for the tanzu failure kind %q", k)
		}
	}
}
