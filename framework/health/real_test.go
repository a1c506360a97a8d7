package health

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	cryptorand "crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os/exec"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/assert"
	"github.com/tkg-e2e/harness/framework/assert/asserttest"
	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/wait"
)

// Real-cluster tests: the one-node kind cluster of
// scripts/test-assertions-real.sh (HARNESS_TEST_KUBECONFIG). They run with
// go test -p 1: the NotReady test stops the node's kubelet, which no other
// package's test may see.

const (
	settle = 3 * time.Minute
	// notReadyWithin bounds how long the node controller takes to mark a node
	// whose kubelet stopped (node-monitor-grace-period 40 s, then a poll).
	notReadyWithin = 2 * time.Minute
)

func expectKind(k *kube.Cluster, t *testing.T) Expectation {
	t.Helper()
	v, err := k.Clientset.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	return Expectation{ControlPlaneNodes: 1, WorkerNodes: 0, KubernetesVersion: v.GitVersion}
}

func checkReal(t *testing.T, k *kube.Cluster, e Expectation, timeout time.Duration) (assert.Report, error) {
	t.Helper()
	c := NewCheck(func(assert.Target) (Expectation, bool) { return e, true })
	return assert.CheckTarget(context.Background(), c, assert.Target{Role: assert.Workload, Name: "kind", Cluster: k},
		assert.Options{Timeout: timeout, Interval: 2 * time.Second, Progress: asserttest.Log{T: t}})
}

func TestRealHealthyKindClusterPasses(t *testing.T) {
	k := asserttest.Connect(t, "busybox:1.35.0")
	if _, err := checkReal(t, k, expectKind(k, t), settle); err != nil {
		t.Fatalf("a healthy kind cluster failed the health check: %v", err)
	}
	// The same cluster against the wrong size and version must fail, naming both.
	e := expectKind(k, t)
	e.WorkerNodes, e.KubernetesVersion = 2, "v1.32.0"
	_, err := checkReal(t, k, e, 3*time.Second)
	if err == nil {
		t.Fatal("1 node passed an expectation of 1 + 2 at v1.32.0")
	}
	asserttest.Says(t, "failure", err.Error(), "want 1 + 2", "v1.32.0")
}

// An APIService whose Service does not exist stays Available=False: the
// check must fail and quote the aggregator's reason.
func TestRealUnavailableAPIServiceFails(t *testing.T) {
	k := asserttest.Connect(t, "busybox:1.35.0")
	name := "v1.tkg-e2e-broken.example.com"
	as := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{"group": "tkg-e2e-broken.example.com", "version": "v1", "groupPriorityMinimum": int64(1000),
			"versionPriority": int64(15), "insecureSkipTLSVerify": true,
			"service": map[string]any{"namespace": "default", "name": "tkg-e2e-no-such-service", "port": int64(443)}},
	}}
	if err := k.Client.Create(context.Background(), as); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := k.Client.Delete(context.Background(), as); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting APIService %s: %v", name, err)
		}
	})
	_, err := checkReal(t, k, expectKind(k, t), 20*time.Second)
	if err == nil {
		t.Fatalf("APIService %s with no Service passed the health check", name)
	}
	asserttest.Says(t, "failure", err.Error(), name, "ServiceNotFound")
}

// A node whose kubelet stopped goes NotReady (Unknown): the check must fail
// naming the node and the node controller's reason. The kubelet is started
// again and the node must come back before the test ends.
func TestRealNodeNotReadyFails(t *testing.T) {
	k := asserttest.Connect(t, "busybox:1.35.0")
	var nodes corev1.NodeList
	if err := k.Client.List(context.Background(), &nodes); err != nil || len(nodes.Items) == 0 {
		t.Fatalf("listing nodes: %v (%d)", err, len(nodes.Items))
	}
	node := nodes.Items[0].Name // kind names the node after its container
	e := expectKind(k, t)
	docker := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("docker", args...).CombinedOutput(); err != nil {
			t.Fatalf("docker %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	docker("exec", node, "systemctl", "stop", "kubelet")
	t.Cleanup(func() {
		docker("exec", node, "systemctl", "start", "kubelet")
		if _, err := checkReal(t, k, e, settle); err != nil {
			t.Errorf("node %s did not come back after the kubelet was started again: %v", node, err)
		}
	})
	// Wait until the node controller has seen it, then check once more.
	err := wait.For(context.Background(), wait.Options{What: "node " + node + " NotReady after its kubelet stopped", Timeout: notReadyWithin,
		Interval: 2 * time.Second, Progress: asserttest.Log{T: t}}, func(ctx context.Context) (bool, string, error) {
		var n corev1.Node
		if err := k.Client.Get(ctx, client.ObjectKey{Name: node}, &n); err != nil {
			return false, "", err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status != corev1.ConditionTrue, string(c.Status) + " " + c.Reason, nil
			}
		}
		return false, "no Ready condition", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = checkReal(t, k, e, 3*time.Second)
	var fe *assert.FailedError
	if !errors.As(err, &fe) {
		t.Fatalf("want a FailedError naming the node, got %v", err)
	}
	asserttest.Says(t, "failure", err.Error(), node, "NodeStatusUnknown")
}

// A webhook whose Service has a ready endpoint but whose server does not
// speak TLS (busybox httpd, plain HTTP) passes the endpoint check while the
// API server rejects every create it matches: the dry-run probe must fail
// it, and the wait must give up after its grace with the webhook and its
// Service as the first words, not at the timeout. The webhook matches only
// configmaps in namespaces labelled tkg-e2e-fault=webhook (none but the
// check's scratch namespace), so it breaks nothing else on the cluster.
func TestRealUnansweredWebhookFails(t *testing.T) {
	k := asserttest.Connect(t, "busybox:1.35.0")
	ctx := context.Background()
	suffix := utilrand.String(5)
	ns, svc, cfg, hook := "tkg-e2e-webhook-"+suffix, "unanswered", "tkg-e2e-unanswered-"+suffix, "unanswered.tkg-e2e.example.com"
	create := func(obj client.Object) {
		t.Helper()
		if err := k.Client.Create(ctx, obj); err != nil {
			t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
		}
		t.Cleanup(func() {
			if err := k.Client.Delete(context.Background(), obj); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting %T %s: %v", obj, obj.GetName(), err)
			}
		})
	}
	t.Cleanup(func() {
		if err := DeleteAdmissionLeftovers(context.Background(), k.Client); err != nil {
			t.Errorf("DeleteAdmissionLeftovers: %v", err)
		}
	})
	create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	labels := map[string]string{"app": svc}
	create(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: svc}, Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To(int64(0)),
			Containers: []corev1.Container{{Name: "httpd", Image: "busybox:1.35.0", ImagePullPolicy: corev1.PullIfNotPresent,
				Command: []string{"httpd", "-f", "-p", "8443"},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8443)}},
					PeriodSeconds: 1}}}}}}})
	create(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: svc}, Spec: corev1.ServiceSpec{Selector: labels,
		Ports: []corev1.ServicePort{{Port: 443, TargetPort: intstr.FromInt32(8443)}}}})
	err := wait.For(ctx, wait.Options{What: "Deployment " + ns + "/" + svc + " available", Timeout: settle, Interval: time.Second,
		Progress: asserttest.Log{T: t}}, func(ctx context.Context) (bool, string, error) {
		var d appsv1.Deployment
		if err := k.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: svc}, &d); err != nil {
			return false, "", err
		}
		return d.Status.AvailableReplicas > 0, fmt.Sprintf("%d available", d.Status.AvailableReplicas), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	path := "/validate"
	create(&admissionv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: cfg}, Webhooks: []admissionv1.ValidatingWebhook{{
		Name: hook, AdmissionReviewVersions: []string{"v1"}, FailurePolicy: ptr.To(admissionv1.Fail),
		SideEffects: ptr.To(admissionv1.SideEffectClassNone), TimeoutSeconds: ptr.To(int32(5)),
		ClientConfig: admissionv1.WebhookClientConfig{CABundle: selfSignedPEM(t, svc+"."+ns+".svc"),
			Service: &admissionv1.ServiceReference{Namespace: ns, Name: svc, Path: &path, Port: ptr.To(int32(443))}},
		Rules: []admissionv1.RuleWithOperations{{Operations: []admissionv1.OperationType{admissionv1.Create},
			Rule: admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}},
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tkg-e2e-fault": "webhook"}},
	}}})

	start := time.Now()
	e := expectKind(k, t)
	_, err = assert.CheckTarget(ctx, NewCheck(func(assert.Target) (Expectation, bool) { return e, true }),
		assert.Target{Role: assert.Workload, Name: "kind", Cluster: k},
		assert.Options{Timeout: 5 * time.Minute, Interval: 2 * time.Second, Grace: 10 * time.Second, Progress: asserttest.Log{T: t}})
	took := time.Since(start)
	t.Logf("verdict after %s", took.Round(100*time.Millisecond))
	if err == nil {
		t.Fatalf("webhook %s, which does not answer, passed the health check", hook)
	}
	first, _, _ := strings.Cut(err.Error(), "\n")
	want := fmt.Sprintf("webhook %s (ValidatingWebhookConfiguration %s, Service %s/%s) failed a dry-run create of configmaps %s", hook, cfg, ns, svc, scratchPrefix)
	if !strings.HasPrefix(first, want) {
		t.Errorf("first line of the failure:\n  %s\nwant it to start with\n  %s\nwhole error:\n%v", first, want, err)
	}
	asserttest.Says(t, "first line", first, `failed calling webhook "`+hook+`"`, "gave up after")
	if took > time.Minute {
		t.Errorf("the verdict took %s: the wait did not give up after its grace", took)
	}
	// Finish deleted the scratch namespace (it may still be terminating).
	var left corev1.NamespaceList
	if err := k.Client.List(ctx, &left, client.MatchingLabels{AdmissionProbeLabel: "true"}); err != nil {
		t.Fatal(err)
	}
	for _, n := range left.Items {
		if n.DeletionTimestamp == nil {
			t.Errorf("scratch namespace %s left behind", n.Name)
		}
	}
}

// selfSignedPEM is a CA bundle the API server will accept as a bundle, and
// which nothing signs the webhook's (absent) certificate with.
func selfSignedPEM(t *testing.T, host string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), cryptorand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(cryptorand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
