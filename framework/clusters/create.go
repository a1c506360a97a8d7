// Package clusters provisions and deletes Cluster API clusters. The
// management cluster and workload clusters go through one path, Provision:
// Create (generate from a clusterctl template, apply until the provider
// webhooks answer, the CNI as soon as the cluster's API answers, then wait
// for control plane, machines, nodes and the Cluster's Available condition),
// images into CAPD nodes, `clusterctl init` for a management cluster,
// kapp-controller, and a caller's hook for what else the suite installs.
// Every wait has its own timeout and reports progress and the last state
// seen. Deleter is cleanup's way to delete what Create recorded.
package clusters

import (
	"context"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/kube"
	"github.com/tkg-e2e/harness/framework/node"
	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/framework/wait"
)

// ResourceKind is the run-state kind of a Cluster API cluster.
const ResourceKind = "capi-cluster"

// Roles of Cluster API clusters in the run state.
const (
	RoleManagement = "management"
	RoleWorkload   = "workload"
)

// Attributes recorded with a capi-cluster resource.
const (
	// AttrManagedBy is the kubeconfig of the cluster that holds the Cluster object.
	AttrManagedBy = "managedBy"
	// AttrSelfHosted is "true" once a management cluster holds its own Cluster object (after move).
	AttrSelfHosted = "selfHosted"
	// AttrMoving is the target's kubeconfig while `clusterctl move` of the
	// cluster runs, and stays when the move did not end: the Cluster may then
	// be paused on the source with part of its objects on the target. It
	// gives way to AttrManagedBy once the move is done.
	AttrMoving = "moving"
	// AttrContainerLabel is the docker label of its node and load balancer containers.
	AttrContainerLabel = "containerLabel"
)

// CreateTimeouts bound and pace the waits of Create, one config interval
// per wait, so each polls at its own rate.
type CreateTimeouts struct {
	// Apply bounds applying the generated objects (retries while webhooks refuse).
	Apply wait.Interval
	// APIReachable bounds the wait for the kubeconfig Secret and the cluster's API.
	APIReachable wait.Interval
	// CNI bounds applying the CNI manifest.
	CNI                     wait.Interval
	ControlPlaneInitialized wait.Interval
	MachinesRunning         wait.Interval
	NodesReady              wait.Interval
	ClusterAvailable        wait.Interval
}

func (t CreateTimeouts) validate() []string {
	return wait.Timeouts{"Apply": t.Apply.Timeout, "APIReachable": t.APIReachable.Timeout, "CNI": t.CNI.Timeout,
		"ControlPlaneInitialized": t.ControlPlaneInitialized.Timeout, "MachinesRunning": t.MachinesRunning.Timeout,
		"NodesReady": t.NodesReady.Timeout, "ClusterAvailable": t.ClusterAvailable.Timeout}.Missing("Timeouts.")
}

// CreateInput is the input of Create.
type CreateInput struct {
	Spec
	// Role recorded in the run state: management or workload.
	Role string
	// ID, when the role does not name the cluster in the run (a second
	// workload cluster: workload-2), is recorded as the resource's Cluster.
	ID string
	// ManagementKubeconfig of the cluster that will hold the Cluster object.
	ManagementKubeconfig string
	ClusterctlConfigPath string
	// CNIManifest (path or URL) is applied as soon as the new cluster's API
	// answers; nodes stay NotReady until then. Empty skips it (a flavor that
	// brings its own CNI).
	CNIManifest string
	// KubeconfigPath is written with the new cluster's kubeconfig.
	KubeconfigPath string
	State          *run.State
	CreatedBy      string
	// Customize, if set, edits the generated objects before they are applied
	// (e.g. customVMXKeys on CAPV's machine templates).
	Customize func(objs []*unstructured.Unstructured) error
	// StopAfter is empty or StopAfterProvisioned (a rehearsal against a
	// vCenter whose VMs boot nothing): Create then returns a *StoppedError
	// with StopReason once the Machines are provisioned.
	StopAfter  string
	StopReason string
	// Running, if set, is called once every Machine is Running with a node,
	// before the waits for Ready nodes and the Cluster's Available: the node
	// containers exist and the API answers, which is all that loading images
	// and installing providers need (their pods wait for a Ready node by
	// themselves), so Provision starts them there instead of after Create.
	// It must not block.
	Running  func(c *Cluster)
	Timeouts CreateTimeouts
	Progress io.Writer
	Prefix   string
}

func (in *CreateInput) validate() error {
	errs := in.Spec.validate()
	if in.Role != RoleManagement && in.Role != RoleWorkload {
		errs = append(errs, fmt.Sprintf("Role %q is not %q or %q", in.Role, RoleManagement, RoleWorkload))
	}
	if in.ManagementKubeconfig == "" {
		errs = append(errs, "ManagementKubeconfig is empty")
	}
	if in.KubeconfigPath == "" {
		errs = append(errs, "KubeconfigPath is empty (where to save the new cluster's kubeconfig)")
	}
	if in.State == nil {
		errs = append(errs, "State is nil (resources are recorded in the run state before they are created; use run.New)")
	}
	return wait.Invalid("clusters.Create", append(errs, in.Timeouts.validate()...))
}

// Cluster is a Cluster API cluster the harness created or attached to.
type Cluster struct {
	Name      string
	Namespace string
	// KubeconfigPath of the cluster itself.
	KubeconfigPath string
	Kube           *kube.Cluster
	// Management is the cluster holding the Cluster object.
	Management *kube.Cluster
}

// CreateResult is what Create returns.
type CreateResult struct {
	Cluster  *Cluster
	Machines []Machine
	// Steps are the durations of generate, apply, api-reachable, cni,
	// control-plane-initialized, machines-running, nodes-ready, cluster-available.
	Steps wait.Steps
}

// DeleteHint is the command that deletes a Cluster API cluster by hand: through
// the cluster that holds its Cluster object, or, if that is gone, its containers.
func DeleteHint(managementKubeconfig, namespace, name string) string {
	return fmt.Sprintf("kubectl --kubeconfig %s -n %s delete cluster %s --wait || docker rm -f -v $(docker ps -aq --filter label=%s=%s)",
		managementKubeconfig, namespace, name, node.ClusterLabel, name)
}

// Create generates a cluster from the clusterctl template, records it in the
// run state, applies it (retrying until the provider webhooks answer), applies
// the CNI as soon as the cluster's API answers, saves its kubeconfig and waits
// for control plane initialized, every machine Running with a node, every node
// Ready and the Cluster Available.
func Create(ctx context.Context, in CreateInput) (*CreateResult, error) {
	if err := in.validate(); err != nil {
		return nil, err
	}
	res := &CreateResult{}
	p := wait.Printer{W: in.Progress, Prefix: in.Prefix}
	mgmt, err := kube.Connect(in.ManagementKubeconfig)
	if err != nil {
		return nil, err
	}
	var cni []byte
	if in.CNIManifest != "" {
		// Read it first: a wrong path should fail before anything is created.
		if cni, err = kube.ReadManifest(ctx, in.CNIManifest); err != nil {
			return nil, fmt.Errorf("CNI manifest: %w", err)
		}
	}
	cniObjs, err := kube.ParseManifest(cni)
	if err != nil {
		return nil, fmt.Errorf("CNI manifest %s: %w", in.CNIManifest, err)
	}

	start := time.Now()
	yaml, err := Generate(ctx, GenerateInput{Spec: in.Spec, ManagementKubeconfig: in.ManagementKubeconfig, ClusterctlConfigPath: in.ClusterctlConfigPath})
	if err != nil {
		return nil, err
	}
	objs, err := kube.ParseManifest(yaml)
	if err != nil {
		return nil, fmt.Errorf("generated template of %s: %w", in.Name, err)
	}
	if in.Customize != nil {
		if err := in.Customize(objs); err != nil {
			return nil, fmt.Errorf("customizing the generated template of %s: %w", in.Name, err)
		}
	}
	res.Steps.Since("generate", start)

	key := run.Resource{Kind: ResourceKind, Namespace: in.Namespace, Name: in.Name}.Key()
	if err := in.State.PutResource(run.Resource{
		Kind: ResourceKind, Name: in.Name, Namespace: in.Namespace, Role: in.Role, Cluster: run.IDUnlessRole(in.ID, in.Role), Kubeconfig: in.KubeconfigPath,
		CreatedBy: in.CreatedBy, State: "creating", DeleteHint: DeleteHint(in.ManagementKubeconfig, in.Namespace, in.Name),
		Attributes: map[string]string{AttrManagedBy: in.ManagementKubeconfig, AttrContainerLabel: node.ClusterLabel + "=" + in.Name,
			"kubernetesVersion": in.KubernetesVersion, "flavor": in.Flavor,
			"machines": fmt.Sprintf("%d control plane, %d workers", in.ControlPlaneMachineCount, in.WorkerMachineCount)},
	}); err != nil {
		return nil, fmt.Errorf("recording cluster %s in the run state: %w", in.Name, err)
	}

	start = time.Now()
	if err := ensureNamespace(ctx, mgmt, in.Namespace, in.Timeouts.Apply); err != nil {
		return res, err
	}
	p.Printf("applying %d objects of cluster %s/%s (flavor %s, %d control plane, %d workers, %s)", len(objs), in.Namespace, in.Name,
		in.Flavor, in.ControlPlaneMachineCount, in.WorkerMachineCount, in.KubernetesVersion)
	if err := kube.Apply(ctx, kube.ApplyInput{Cluster: mgmt, Objects: objs, DefaultNamespace: in.Namespace,
		What: fmt.Sprintf("cluster %s/%s", in.Namespace, in.Name), Timeout: in.Timeouts.Apply.Timeout, Interval: in.Timeouts.Apply.Poll,
		Progress: in.Progress, Prefix: in.Prefix}); err != nil {
		return res, err
	}
	res.Steps.Since("apply", start)

	if in.StopAfter == StopAfterProvisioned {
		start = time.Now()
		err := waitProvisioned(ctx, mgmt, in, in.StopReason)
		res.Steps.Since("machines-provisioned", start)
		return res, err
	}

	start = time.Now()
	wl, err := WaitAPI(ctx, WaitAPIInput{Management: mgmt, Namespace: in.Namespace, Name: in.Name, KubeconfigPath: in.KubeconfigPath,
		Timeout: in.Timeouts.APIReachable.Timeout, Interval: in.Timeouts.APIReachable.Poll, Progress: in.Progress, Prefix: in.Prefix})
	if err != nil {
		return res, err
	}
	res.Steps.Since("api-reachable", start)
	c := &Cluster{Name: in.Name, Namespace: in.Namespace, KubeconfigPath: in.KubeconfigPath, Kube: wl, Management: mgmt}
	res.Cluster = c

	if len(cniObjs) > 0 {
		start = time.Now()
		if err := kube.Apply(ctx, kube.ApplyInput{Cluster: wl, Objects: cniObjs, What: "CNI on " + in.Name,
			Timeout: in.Timeouts.CNI.Timeout, Interval: in.Timeouts.CNI.Poll, Progress: in.Progress, Prefix: in.Prefix}); err != nil {
			return res, err
		}
		p.Printf("applied CNI (%d objects from %s) to %s", len(cniObjs), in.CNIManifest, in.Name)
		res.Steps.Since("cni", start)
	}

	start = time.Now()
	if err := waitCluster(ctx, mgmt, in, "control plane of "+in.Name+" initialized", in.Timeouts.ControlPlaneInitialized, ControlPlaneInitialized); err != nil {
		return res, err
	}
	res.Steps.Since("control-plane-initialized", start)

	start = time.Now()
	want := int(in.ControlPlaneMachineCount + in.WorkerMachineCount)
	if err := wait.For(ctx, wait.Options{What: fmt.Sprintf("%d machines of %s Running with a node", want, in.Name),
		Timeout: in.Timeouts.MachinesRunning.Timeout, Interval: in.Timeouts.MachinesRunning.Poll, Progress: in.Progress, Prefix: in.Prefix},
		func(ctx context.Context) (bool, string, error) {
			ms, err := Machines(ctx, mgmt.Client, in.Namespace, in.Name)
			if err != nil {
				return false, "", err
			}
			ok, state := MachinesSummary(ms, want)
			res.Machines = ms
			return ok >= want && len(ms) == want, state, nil
		}); err != nil {
		return res, err
	}
	res.Steps.Since("machines-running", start)
	// What identifies the cluster for certain, for cleanup (best effort: a failure here is not the cluster's).
	containers := in.Infrastructure == nil || in.Infrastructure.NodesAreContainers()
	if err := RecordContainers(ctx, mgmt, in.ManagementKubeconfig, in.State, in.Namespace, in.Name, res.Machines, containers); err != nil {
		p.Printf("warning: cannot record what identifies cluster %s (cleanup falls back to name, label and creation time): %v", in.Name, err)
	}
	if in.Running != nil {
		in.Running(c)
	}

	start = time.Now()
	if err := kube.WaitNodesReady(ctx, kube.NodesInput{Cluster: wl, Count: want, What: fmt.Sprintf("%d nodes of %s Ready", want, in.Name),
		Timeout: in.Timeouts.NodesReady.Timeout, Interval: in.Timeouts.NodesReady.Poll, Progress: in.Progress, Prefix: in.Prefix}); err != nil {
		return res, err
	}
	res.Steps.Since("nodes-ready", start)

	start = time.Now()
	if err := waitCluster(ctx, mgmt, in, "Cluster "+in.Name+" Available", in.Timeouts.ClusterAvailable, Available); err != nil {
		return res, err
	}
	res.Steps.Since("cluster-available", start)
	if err := in.State.SetResourceState(key, "ready"); err != nil {
		return res, err
	}
	return res, nil
}

func waitCluster(ctx context.Context, mgmt *kube.Cluster, in CreateInput, what string, iv wait.Interval, done func(*clusterv1.Cluster) bool) error {
	return wait.For(ctx, wait.Options{What: what, Timeout: iv.Timeout, Interval: iv.Poll, Progress: in.Progress, Prefix: in.Prefix},
		func(ctx context.Context) (bool, string, error) {
			c := &clusterv1.Cluster{}
			if err := mgmt.Client.Get(ctx, client.ObjectKey{Namespace: in.Namespace, Name: in.Name}, c); err != nil {
				if apierrors.IsNotFound(err) {
					return false, "", wait.Permanent(fmt.Errorf("Cluster %s/%s is gone", in.Namespace, in.Name))
				}
				return false, "", err
			}
			return done(c), ClusterState(c), nil
		})
}

func ensureNamespace(ctx context.Context, c *kube.Cluster, name string, iv wait.Interval) error {
	return wait.For(ctx, wait.Options{What: "namespace " + name, Timeout: iv.Timeout, Interval: iv.Poll},
		func(ctx context.Context) (bool, string, error) {
			err := c.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
			if err == nil || apierrors.IsAlreadyExists(err) {
				return true, "", nil
			}
			return false, "", err
		})
}
