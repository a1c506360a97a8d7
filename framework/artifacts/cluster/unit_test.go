package cluster

import (
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/tree"
	"sigs.k8s.io/yaml"

	"github.com/tkg-e2e/harness/framework/artifacts"
)

func obj(t *testing.T, y string) unstructured.Unstructured {
	t.Helper()
	var u unstructured.Unstructured
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestSanitizeMasksSecretButKeepsItsShape(t *testing.T) {
	s := obj(t, `apiVersion: v1
kind: Secret
metadata:
  name: mgmt-kubeconfig
  namespace: default
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"data":{"value":"a3ViZWNvbmZpZw=="}}'
  managedFields:
  - manager: kubectl
data:
  value: a3ViZWNvbmZpZw==
stringData:
  extra: plain-secret-text
type: cluster.x-k8s.io/secret
`)
	sanitize(&s)
	b, _ := yaml.Marshal(s.Object)
	out := string(b)
	for _, leaked := range []string{"a3ViZWNvbmZpZw==", "plain-secret-text", "managedFields"} {
		if strings.Contains(out, leaked) {
			t.Errorf("%q survived:\n%s", leaked, out)
		}
	}
	for _, kept := range []string{"name: mgmt-kubeconfig", "value: <redacted>", "extra: <redacted>", "type: cluster.x-k8s.io/secret"} {
		if !strings.Contains(out, kept) {
			t.Errorf("%q lost:\n%s", kept, out)
		}
	}
	cm := obj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n")
	sanitize(&cm)
	if v, _, _ := unstructured.NestedString(cm.Object, "data", "a"); v != "b" {
		t.Errorf("ConfigMap data changed: %v", cm.Object)
	}
}

func TestSelectKindsTakesCAPIProvidersTKGAndCarvel(t *testing.T) {
	res := func(name, kind string, verbs ...string) metav1.APIResource {
		return metav1.APIResource{Name: name, Kind: kind, Namespaced: true, Verbs: verbs}
	}
	lists := []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{res("pods", "Pod", "list"), res("pods/log", "Pod", "get"), res("configmaps", "ConfigMap", "list"), res("secrets", "Secret", "list")}},
		{GroupVersion: "cluster.x-k8s.io/v1beta2", APIResources: []metav1.APIResource{res("clusters", "Cluster", "list"), res("machines", "Machine", "list")}},
		{GroupVersion: "infrastructure.cluster.x-k8s.io/v1beta2", APIResources: []metav1.APIResource{res("dockermachines", "DockerMachine", "list")}},
		{GroupVersion: "controlplane.cluster.x-k8s.io/v1beta2", APIResources: []metav1.APIResource{res("kubeadmcontrolplanes", "KubeadmControlPlane", "list")}},
		{GroupVersion: "run.tanzu.vmware.com/v1alpha3", APIResources: []metav1.APIResource{res("tanzukubernetesreleases", "TanzuKubernetesRelease", "list")}},
		{GroupVersion: "packaging.carvel.dev/v1alpha1", APIResources: []metav1.APIResource{res("packageinstalls", "PackageInstall", "list")}},
		{GroupVersion: "data.packaging.carvel.dev/v1alpha1", APIResources: []metav1.APIResource{res("packages", "Package", "list")}},
		{GroupVersion: "example.com/v1", APIResources: []metav1.APIResource{res("widgets", "Widget", "list")}},
		{GroupVersion: "cluster.x-k8s.io/v1beta2", APIResources: []metav1.APIResource{res("machinedrainrules", "MachineDrainRule", "watch")}},
	}
	var got []string
	for _, k := range selectKinds(lists) {
		got = append(got, k.file())
	}
	want := []string{"resources/core/pods.yaml", "resources/core/secrets.yaml", "resources/cluster.x-k8s.io/clusters.yaml", "resources/cluster.x-k8s.io/machines.yaml",
		"resources/controlplane.cluster.x-k8s.io/kubeadmcontrolplanes.yaml", "resources/infrastructure.cluster.x-k8s.io/dockermachines.yaml",
		"resources/packaging.carvel.dev/packageinstalls.yaml", "resources/run.tanzu.vmware.com/tanzukubernetesreleases.yaml"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestPackageFindingsPreferUsefulErrorMessage(t *testing.T) {
	objs := []unstructured.Unstructured{
		obj(t, `metadata: {name: bad-values, namespace: tkg-system}
spec: {packageRef: {refName: cert-manager.tanzu.vmware.com, versionSelection: {constraints: 1.0.0}}}
status:
  usefulErrorMessage: "ytt: Error: Validating final data: - replicas: Expected number"
  conditions: [{type: ReconcileFailed, status: "True", message: "Error (see .status.usefulErrorMessage for details)"}]`),
		obj(t, `metadata: {name: no-version, namespace: tkg-system}
spec: {packageRef: {refName: foo.example.com, versionSelection: {constraints: 9.9.9}}}
status:
  conditions: [{type: ReconcileFailed, status: "True", message: "Expected to find at least one version, but did not"}]`),
		obj(t, `metadata: {name: good, namespace: tkg-system}
status: {conditions: [{type: ReconcileSucceeded, status: "True"}]}`),
	}
	got := packageFindings(objs)
	if len(got) != 2 {
		t.Fatalf("got %+v", got)
	}
	if !strings.Contains(got[0].Message, "Expected number") || got[0].Package != "cert-manager.tanzu.vmware.com" || got[0].Version != "1.0.0" {
		t.Errorf("useful error message not used: %+v", got[0])
	}
	if !strings.Contains(got[1].Message, "at least one version") {
		t.Errorf("condition message not used when usefulErrorMessage is empty: %+v", got[1])
	}
}

func TestMachineFindings(t *testing.T) {
	objs := []unstructured.Unstructured{
		obj(t, `metadata: {name: joined, namespace: default}
status: {nodeRef: {name: n0}, phase: Running}`),
		obj(t, `metadata: {name: no-vm, namespace: default}
spec: {clusterName: mgmt}
status:
  phase: Provisioning
  conditions:
  - {type: Ready, status: "False", message: "not ready"}
  - {type: InfrastructureReady, status: "False", message: "DockerMachine default/no-vm: failed to create container"}`),
		obj(t, `metadata: {name: not-joined, namespace: default}
status:
  phase: Provisioned
  initialization: {infrastructureProvisioned: true, bootstrapDataSecretCreated: true}
  conditions: [{type: NodeReady, status: "Unknown", message: "Waiting for a Node with spec.providerID docker:////not-joined"}]`),
	}
	got := machineFindings(objs)
	if len(got) != 2 || got[0].Name != "no-vm" || got[1].Name != "not-joined" {
		t.Fatalf("got %+v", got)
	}
	if got[0].InfrastructureProvisioned || !strings.HasPrefix(got[0].Message, "InfrastructureReady: DockerMachine") || got[0].Cluster != "mgmt" {
		t.Errorf("no-vm: %+v", got[0])
	}
	if !got[1].InfrastructureProvisioned || !strings.Contains(got[1].Message, "Waiting for a Node") {
		t.Errorf("not-joined: %+v", got[1])
	}
}

func TestPodFindingsPickTheTellingReasonAndTail(t *testing.T) {
	pods := toPods([]unstructured.Unstructured{
		obj(t, `metadata: {name: crashy, namespace: capi-system}
spec: {nodeName: w0, containers: [{name: manager, image: x}]}
status:
  phase: Running
  conditions: [{type: Ready, status: "False"}]
  containerStatuses:
  - name: manager
    ready: false
    restartCount: 4
    state: {waiting: {reason: CrashLoopBackOff, message: back-off 40s}}
    lastState: {terminated: {exitCode: 1, reason: Error}}`),
		obj(t, `metadata: {name: pending, namespace: default}
spec: {containers: [{name: web, image: x}]}
status:
  phase: Pending
  conditions: [{type: PodScheduled, status: "False", reason: Unschedulable, message: "0/2 nodes are available: 1 node(s) had untolerated taint"}]`),
		obj(t, `metadata: {name: fine, namespace: default}
spec: {containers: [{name: web, image: x}]}
status: {phase: Running, conditions: [{type: Ready, status: "True"}]}`),
		obj(t, `metadata: {name: done, namespace: default}
spec: {containers: [{name: job, image: x}]}
status: {phase: Succeeded}`),
	})
	c := &collection{folder: "clusters/management-mgmt"}
	c.tails.Store(c.podLogPath("capi-system", "crashy", "manager", true), "E panic: no kind is registered")
	c.tails.Store(c.podLogPath("capi-system", "crashy", "manager", false), "")
	got := c.podFindings(pods)
	if len(got) != 2 {
		t.Fatalf("got %+v", got)
	}
	crashy, pending := got[0], got[1]
	if crashy.Reason != "CrashLoopBackOff" || crashy.Restarts != 4 || len(crashy.Containers) != 1 {
		t.Errorf("crashy: %+v", crashy)
	} else if ct := crashy.Containers[0]; ct.LogTail != "E panic: no kind is registered" || !strings.HasSuffix(ct.LogFile, "manager.previous.log") {
		t.Errorf("crash loop should show the previous run's log: %+v", ct)
	}
	if !pending.Unschedulable || pending.Reason != "Unschedulable" || !strings.Contains(pending.Message, "untolerated taint") {
		t.Errorf("pending: %+v", pending)
	}
}

func TestRenderTree(t *testing.T) {
	cl := &clusterv1.Cluster{TypeMeta: metav1.TypeMeta{Kind: "Cluster", APIVersion: clusterv1.GroupVersion.String()},
		ObjectMeta: metav1.ObjectMeta{Name: "mgmt", Namespace: "default", UID: types.UID("c")},
		Status: clusterv1.ClusterStatus{Conditions: []metav1.Condition{
			{Type: clusterv1.AvailableCondition, Status: metav1.ConditionFalse, Reason: "NotAvailable", Message: "* WorkersAvailable: 0 of 1 available"},
			{Type: "RemoteConnectionProbe", Status: metav1.ConditionFalse, Reason: "ProbeFailed", Message: "Remote connection probe failed"},
			{Type: "Paused", Status: metav1.ConditionFalse, Reason: "NotPaused"},
		}}}
	m := &clusterv1.Machine{TypeMeta: metav1.TypeMeta{Kind: "Machine", APIVersion: clusterv1.GroupVersion.String()},
		ObjectMeta: metav1.ObjectMeta{Name: "mgmt-md-0-x", Namespace: "default", UID: types.UID("m")},
		Status:     clusterv1.MachineStatus{Conditions: []metav1.Condition{{Type: clusterv1.ReadyCondition, Status: metav1.ConditionTrue, Reason: "Ready"}}}}
	tr := tree.NewObjectTree(cl, tree.ObjectTreeOptions{ShowOtherConditions: "all", Echo: true})
	workers := tree.VirtualObject("default", "WorkerGroup", "Workers")
	tr.Add(cl, workers)
	tr.Add(workers, m)
	got := renderTree(tr)
	for _, want := range []string{"Cluster/mgmt  Available=False(NotAvailable) — * WorkersAvailable: 0 of 1 available",
		"    · RemoteConnectionProbe=False (ProbeFailed): Remote connection probe failed", "└─Workers", "  └─Machine/mgmt-md-0-x  Ready=True"} {
		if !strings.Contains(got, want) {
			t.Errorf("tree lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "Paused") {
		t.Errorf("a condition without a message is noise:\n%s", got)
	}
}

func TestOnlyCredentialLikeSecretValuesAreRegistered(t *testing.T) {
	s := obj(t, `apiVersion: v1
kind: Secret
metadata: {name: s}
data:
  token: ZGItUGFzczE5ODQ=
  cluster: bWdtdC1jbHVzdGVyLXByb2Q=
  user: YWRtaW5pc3RyYXRvckB2c3BoZXJlLmxvY2Fs
  port: NjQ0MzY0NDM=
  kubeconfig: YXBpVmVyc2lvbjogdjEKa2luZDogQ29uZmlnCg==
stringData:
  apiKey: Xk9-4fGh2LmQ
`)
	got := secretValues([]unstructured.Unstructured{s})
	want := map[string]bool{"db-Pass1984": true, "Xk9-4fGh2LmQ": true}
	if len(got) != len(want) {
		t.Fatalf("got %q", got)
	}
	for _, v := range got {
		if !want[v] {
			t.Errorf("registered %q", v)
		}
	}
}

// A log that went away between the pod listing and its read is not a
// failed collection: a pod deleted meanwhile, or a crash-looping
// container's previous run no longer kept (the kubelet's words, seen on a
// real cluster). Anything else, and the same words for a current log, is.
func TestLogGoneOnlyForWhatWentAway(t *testing.T) {
	prev := apierrors.NewBadRequest(`previous terminated container "main" in pod "crasher-658dd86c88-fhjv6" not found`)
	for _, c := range []struct {
		name     string
		err      error
		previous bool
		gone     bool
	}{
		{"pod deleted", apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "crasher"), false, true},
		{"previous run not kept", prev, true, true},
		{"the same words for a current log", prev, false, false},
		{"forbidden", apierrors.NewForbidden(schema.GroupResource{Resource: "pods/log"}, "crasher", errors.New("rbac")), true, false},
		{"connection refused", errors.New("dial tcp 172.18.0.3:6443: connect: connection refused"), false, false},
	} {
		err := logGone(c.err, c.previous)
		var gone *artifacts.GoneError
		if errors.As(err, &gone) != c.gone {
			t.Errorf("%s: logGone = %v, want gone %v", c.name, err, c.gone)
		}
		if !strings.Contains(err.Error(), c.err.Error()) {
			t.Errorf("%s: %q does not keep the cause %q", c.name, err, c.err)
		}
	}
}
