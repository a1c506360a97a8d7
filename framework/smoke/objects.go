package smoke

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// LabelKey=LabelValue marks every namespace Run creates, so that
// DeleteLeftovers finds those an interrupted run left behind.
const (
	LabelKey    = "tkg-e2e/smoke"
	LabelValue  = "true"
	NamePrefix  = "tkg-e2e-smoke-"
	serverName  = "web"
	serverPort  = 8080
	servicePort = 80
	// clientContainer is the container whose log and exit code make the result.
	clientContainer = "client"
	roleLabel       = "tkg-e2e/smoke-role"
)

func namespace(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{LabelKey: LabelValue}}}
}

func serverLabels() map[string]string {
	return map[string]string{"app": serverName, roleLabel: "server"}
}

// deployment runs one server per schedulable node. The required anti-affinity
// on the hostname is what puts them on distinct nodes; a node that cannot
// take one leaves a pod Pending with the scheduler's reason, which the wait
// reports.
func deployment(ns, image string, replicas int) *appsv1.Deployment {
	labels := serverLabels()
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: serverName, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(replicas)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: podSpec(corev1.Container{
					Name:    serverName,
					Image:   image,
					Command: []string{"sh", "-c", serverScript},
					Env: []corev1.EnvVar{fieldEnv("POD_NAME", "metadata.name"), fieldEnv("NODE_NAME", "spec.nodeName"),
						fieldEnv("POD_IP", "status.podIP")},
					Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: serverPort}},
					ReadinessProbe: &corev1.Probe{
						ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(serverPort)}},
						// The default period (10 s) would add up to 10 s to
						// every run for a server that is up in milliseconds.
						PeriodSeconds: 1,
					},
					VolumeMounts: []corev1.VolumeMount{{Name: "www", MountPath: "/www"}},
				}, func(s *corev1.PodSpec) {
					s.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
						RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
							LabelSelector: &metav1.LabelSelector{MatchLabels: labels},
							TopologyKey:   corev1.LabelHostname,
						}},
					}}
					s.Volumes = []corev1.Volume{{Name: "www", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
				}),
			},
		},
	}
}

func service(ns string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: serverName, Labels: serverLabels()},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: serverLabels(),
			Ports: []corev1.ServicePort{{Name: "http", Port: servicePort, TargetPort: intstr.FromInt32(serverPort),
				Protocol: corev1.ProtocolTCP}},
		},
	}
}

// clientPod runs clientScript on node. It is pinned with a required node
// affinity on metadata.name (as DaemonSet pods are) rather than nodeName:
// the scheduler still checks it, so a client that cannot run there stays
// Pending with the scheduler's reason instead of being rejected by the kubelet;
// and unlike the hostname label, the node name is what the servers report.
func clientPod(ns, name, node, image, serviceHost string, backends []Backend, budget, attempt int) *corev1.Pod {
	targets := make([]string, 0, len(backends))
	for _, b := range backends {
		targets = append(targets, b.Pod+"="+backendURL(b.IP))
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{roleLabel: "client"}},
		Spec: podSpec(corev1.Container{
			Name:    clientContainer,
			Image:   image,
			Command: []string{"sh", "-c", clientScript},
			Env: []corev1.EnvVar{
				fieldEnv("SMOKE_NODE", "spec.nodeName"),
				{Name: "SMOKE_SERVICE_HOST", Value: serviceHost},
				{Name: "SMOKE_BACKENDS", Value: strings.Join(targets, " ")},
				{Name: "SMOKE_BUDGET_SECONDS", Value: strconv.Itoa(budget)},
				{Name: "SMOKE_ATTEMPT_SECONDS", Value: strconv.Itoa(attempt)},
			},
		}, func(s *corev1.PodSpec) {
			s.RestartPolicy = corev1.RestartPolicyNever
			s.Tolerations = clientTolerations
			s.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
				}}},
			}}
		}),
	}
}

// backendURL brackets an IPv6 address, which a URL needs.
func backendURL(ip string) string {
	return "http://" + net.JoinHostPort(ip, strconv.Itoa(serverPort)) + "/"
}

// podSpec is what servers and clients share. The security settings meet the
// "restricted" Pod Security Standard, so the pods run whatever level the
// cluster enforces on a new namespace.
func podSpec(c corev1.Container, more func(*corev1.PodSpec)) corev1.PodSpec {
	c.ImagePullPolicy = corev1.PullIfNotPresent
	c.SecurityContext = &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
	c.Resources = corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("5m"), corev1.ResourceMemory: resource.MustParse("8Mi"),
	}}
	s := corev1.PodSpec{
		Containers:  []corev1.Container{c},
		Tolerations: podTolerations,
		// Neither talks to the API server.
		AutomountServiceAccountToken: ptr.To(false),
		NodeSelector:                 map[string]string{corev1.LabelOSStable: "linux"},
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot:   ptr.To(true),
			RunAsUser:      ptr.To(int64(65534)), // busybox's nobody; the image declares no user
			RunAsGroup:     ptr.To(int64(65534)),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		// httpd as PID 1 ignores SIGTERM: without this every server would
		// hold the namespace deletion for the default 30 s.
		TerminationGracePeriodSeconds: ptr.To(int64(1)),
	}
	if more != nil {
		more(&s)
	}
	return s
}

func fieldEnv(name, path string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
}

// clientName is the name of the i-th client pod; nodes are not in the name
// because a node name can be longer than a label value or carry dots.
func clientName(i int) string { return fmt.Sprintf("client-%d", i) }
