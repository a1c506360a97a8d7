package artifacts

import "strings"

// Findings are what collectors learned that a reader needs on the first
// page: the report package turns them into SUMMARY.md and the failure
// classification. They are plain data so that reports do not depend on the
// collectors, and an empty set (nothing was collected) is a valid input.

// ClusterFindings describes one cluster after collection.
type ClusterFindings struct {
	Name string `json:"name"`
	Role string `json:"role"`
	// Folder holds this cluster's files, relative to the artifacts root.
	Folder string `json:"folder"`
	// APIError is set when the cluster's API server could not be reached;
	// node logs may still have been collected.
	APIError string `json:"apiError,omitempty"`
	// DockerError is set when the Docker engine could not be asked for the
	// cluster's node containers (kind/CAPD clusters only).
	DockerError string `json:"dockerError,omitempty"`
	// ConditionTrees holds one tree per Cluster API Cluster object found.
	ConditionTrees []ConditionTree `json:"conditionTrees,omitempty"`
	// NotReadyPods are pods that are neither Ready nor Succeeded.
	NotReadyPods []PodFinding `json:"notReadyPods,omitempty"`
	// NotReadyNodes are nodes whose Ready condition is not True.
	NotReadyNodes []NodeFinding `json:"notReadyNodes,omitempty"`
	// FailedPackages are PackageInstalls whose last reconcile failed.
	FailedPackages []PackageFinding `json:"failedPackages,omitempty"`
	// MachinesWithoutNodeRef are Machines that never got a Node.
	MachinesWithoutNodeRef []MachineFinding `json:"machinesWithoutNodeRef,omitempty"`
	// Seconds is how long collecting this cluster took.
	Seconds float64 `json:"seconds"`
}

// ConditionTree is the `clusterctl describe cluster` view of one Cluster.
type ConditionTree struct {
	// Cluster is namespace/name.
	Cluster string `json:"cluster"`
	// Text is the rendered tree.
	Text string `json:"text"`
	// File is the tree's file, relative to the artifacts root.
	File string `json:"file"`
	// Ready reports that the Cluster's Available condition is True.
	Ready bool `json:"ready"`
}

// PodFinding is a pod that is not ready.
type PodFinding struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Node      string `json:"node,omitempty"`
	Phase     string `json:"phase"`
	// Reason is the most telling reason found: a container's waiting reason
	// (CrashLoopBackOff, ImagePullBackOff), Unschedulable, or the pod's own.
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// Unschedulable is set when the scheduler could not place the pod.
	Unschedulable bool               `json:"unschedulable,omitempty"`
	Restarts      int32              `json:"restarts"`
	Containers    []ContainerFinding `json:"containers,omitempty"`
}

// ContainerFinding is one container of a not-ready pod, with the end of its log.
type ContainerFinding struct {
	Name   string `json:"name"`
	Ready  bool   `json:"ready"`
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
	// LogFile is the container's log, relative to the artifacts root.
	LogFile string `json:"logFile,omitempty"`
	// LogTail is the last lines of the log (already redacted).
	LogTail string `json:"logTail,omitempty"`
}

// NodeFinding is a node that is not Ready.
type NodeFinding struct {
	Name    string `json:"name"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// PackageFinding is a PackageInstall whose reconcile failed.
type PackageFinding struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Package   string `json:"package,omitempty"`
	Version   string `json:"version,omitempty"`
	// Message is status.usefulErrorMessage, or the failed condition's message
	// when that is empty (a missing package version reports only there).
	Message string `json:"message"`
}

// MachineFinding is a Machine without a NodeRef.
type MachineFinding struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Cluster   string `json:"cluster,omitempty"`
	Phase     string `json:"phase,omitempty"`
	// InfrastructureProvisioned reports whether the infrastructure provider
	// finished the machine: false points at infrastructure, true at bootstrap.
	InfrastructureProvisioned bool `json:"infrastructureProvisioned"`
	// Message is the first non-empty message of a condition that is not True.
	Message string `json:"message,omitempty"`
}

// VSphereFindings describes the vCenter side of a run.
type VSphereFindings struct {
	// Folder is the inventory path collected.
	Folder string `json:"folder"`
	// Files is the folder of the vSphere files, relative to the artifacts root.
	Files string `json:"files"`
	// APIError is set when vCenter could not be reached or logged in to.
	APIError  string   `json:"apiError,omitempty"`
	VMs       int      `json:"vms"`
	Templates []string `json:"templates,omitempty"`
	// FailedTasks are recent tasks that ended in error.
	FailedTasks []VSphereTask `json:"failedTasks,omitempty"`
	// ErrorEvents are recent events of error or warning severity.
	ErrorEvents []string `json:"errorEvents,omitempty"`
}

// VSphereTask is one vCenter task.
type VSphereTask struct {
	Name   string `json:"name"`
	Entity string `json:"entity,omitempty"`
	State  string `json:"state"`
	Error  string `json:"error,omitempty"`
	Queued string `json:"queued,omitempty"`
}

// IsControllerNamespace says whether a namespace holds lifecycle controllers:
// Cluster API and its providers (clusterctl's default namespaces capi-*,
// cap*-system), cert-manager (their webhooks' certificates), kapp-controller
// and TKG's own (tkg-system). A failing pod there points at a provider, not
// at the workload.
func IsControllerNamespace(ns string) bool {
	switch {
	case strings.HasPrefix(ns, "capi-"), strings.HasPrefix(ns, "cap") && strings.HasSuffix(ns, "-system"),
		ns == "cert-manager", strings.Contains(ns, "kapp-controller"), ns == "tkg-system", ns == "vmware-system-csi":
		return true
	}
	return false
}
