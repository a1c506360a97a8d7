package probe

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/tkg-e2e/harness/framework/wait"
)

// ServiceName names the probe's namespace, Deployment, PodDisruptionBudget
// and Service.
const ServiceName = "tkg-e2e-probe"

// ServiceInput is the input of DeployService.
type ServiceInput struct {
	Clientset kubernetes.Interface
	// Image serves HTTP with busybox's httpd (the smoke image).
	Image string
	// Wait bounds the Deployment becoming Available.
	Wait     wait.Interval
	Progress wait.Printer
}

// Service is a Deployment of two servers with a PodDisruptionBudget
// (minAvailable 1) behind a NodePort Service: what a user's app looks like
// to a rollout that drains its nodes.
type Service struct {
	cs       kubernetes.Interface
	nodePort int32
	mu       sync.Mutex
	urls     []string
	fetched  time.Time
}

// DeployService creates the probe Service and waits for both servers.
func DeployService(ctx context.Context, in ServiceInput) (*Service, error) {
	if in.Clientset == nil || in.Image == "" || in.Wait.Timeout <= 0 {
		return nil, fmt.Errorf("probe.DeployService: Clientset, Image and Wait.Timeout are required")
	}
	cs, ns := in.Clientset, ServiceName
	labels := map[string]string{"app": ServiceName}
	objs := []func() error{
		func() error {
			_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := cs.AppsV1().Deployments(ns).Create(ctx, deployment(in.Image, labels), metav1.CreateOptions{})
			return err
		},
		func() error {
			one := intstr.FromInt32(1)
			_, err := cs.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: ServiceName},
				Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: labels}}}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: ServiceName},
				Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Selector: labels,
					Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}}}, metav1.CreateOptions{})
			return err
		},
	}
	for _, create := range objs {
		if err := create(); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating the probe Service's objects in %s: %w", ns, err)
		}
	}
	err := wait.For(ctx, wait.Options{What: "probe Deployment " + ns + "/" + ServiceName + " with 2 available servers", Timeout: in.Wait.Timeout,
		Interval: in.Wait.Poll, Progress: in.Progress.W, Prefix: in.Progress.Prefix}, func(ctx context.Context) (bool, string, error) {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, ServiceName, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		return d.Status.AvailableReplicas == 2, fmt.Sprintf("%d/2 available", d.Status.AvailableReplicas), nil
	})
	if err != nil {
		return nil, err
	}
	svc, err := cs.CoreV1().Services(ns).Get(ctx, ServiceName, metav1.GetOptions{})
	if err != nil || len(svc.Spec.Ports) == 0 || svc.Spec.Ports[0].NodePort == 0 {
		return nil, fmt.Errorf("reading the probe Service's NodePort: %v", err)
	}
	out := &Service{cs: cs, nodePort: svc.Spec.Ports[0].NodePort}
	// kube-proxy programs a new NodePort a moment after the Service exists:
	// measuring from before that would count its start as an outage.
	err = wait.For(ctx, wait.Options{What: "probe Service answering on every node's NodePort", Timeout: in.Wait.Timeout, Interval: in.Wait.Poll,
		Progress: in.Progress.W, Prefix: in.Progress.Prefix}, func(ctx context.Context) (bool, string, error) {
		urls := out.URLs()
		for _, u := range urls {
			if err := get(ctx, HTTPClient, u); err != nil {
				return false, "", err
			}
		}
		return len(urls) > 0, fmt.Sprintf("%d node(s) answer", len(urls)), nil
	})
	return out, err
}

func deployment(image string, labels map[string]string) *appsv1.Deployment {
	httpGet := &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(8080)}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: ServiceName},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				// A server told to stop keeps serving while the Service stops
				// sending it requests, as a well-behaved app does.
				TerminationGracePeriodSeconds: ptr.To[int64](15),
				Containers: []corev1.Container{{Name: "httpd", Image: image, ImagePullPolicy: corev1.PullIfNotPresent,
					Command:        []string{"sh", "-c", "mkdir -p /tmp/www && echo ok > /tmp/www/index.html && exec httpd -f -p 8080 -h /tmp/www"},
					Ports:          []corev1.ContainerPort{{ContainerPort: 8080}},
					ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: httpGet}, PeriodSeconds: 1},
					Lifecycle:      &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sleep", "5"}}}},
				}}}}}}
}

// URLs are http://<node>:<nodePort>/ of every node, listed at most every two
// seconds; while the API server does not answer, the last list.
func (s *Service) URLs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if time.Since(s.fetched) < 2*time.Second && len(s.urls) > 0 {
		return s.urls
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	nodes, err := s.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return s.urls
	}
	var urls []string
	for _, n := range nodes.Items {
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				urls = append(urls, "http://"+net.JoinHostPort(a.Address, strconv.Itoa(int(s.nodePort)))+"/")
			}
		}
	}
	s.urls, s.fetched = urls, time.Now()
	return urls
}

// Delete removes the probe's namespace (and with it everything in it).
func (s *Service) Delete(ctx context.Context) error {
	err := s.cs.CoreV1().Namespaces().Delete(ctx, ServiceName, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// HTTPClient is the probes' client: no keep-alive (each poll is a new
// connection, as a new user's would be) and no proxy from the environment.
var HTTPClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil}}
