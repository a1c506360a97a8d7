// Package config loads and validates a harness profile (config/local.yaml,
// config/vsphere.yaml). Its shape follows Cluster API's E2EConfig where that
// fits (images with loadBehavior, variables overridable by the environment,
// intervals keyed "stage/key" with a "default/key" fallback) and adds the
// harness's own sections. Loading is strict: every problem in the file is
// reported at once, with file, line, key and a fix, before any work starts.
//
// The package depends only on the standard library, a YAML parser and the
// harness's small stages, strictjson and infrastructure packages, so the validate command
// that runs it first starts in milliseconds.
package config

import "github.com/tkg-e2e/harness/framework/infrastructure"

import "slices"

// Config is one profile after variables are expanded and overrides merged.
type Config struct {
	// Profile is "local" (vcsim + kind + CAPD) or "vsphere" (a real vCenter).
	Profile string `yaml:"profile"`
	// Driver makes the clusters: "clusterctl" (the default: kind, clusterctl
	// and Cluster API, driven by the harness) or "tanzu" (the user's tanzu
	// CLI, as TKG users create clusters; see the tanzu section).
	Driver string `yaml:"driver"`
	// Tanzu configures the tanzu driver; read only with driver: tanzu.
	Tanzu Tanzu `yaml:"tanzu"`
	// Timeout bounds the whole suite (ginkgo --timeout), e.g. "75m".
	Timeout string `yaml:"timeout"`
	// Variables are defaults for ${VAR} references and are passed to clusterctl;
	// an environment variable of the same name wins (as in Cluster API's E2EConfig).
	Variables map[string]string `yaml:"variables"`
	// Intervals are [timeout, poll] pairs keyed "stage/key" with "default/key" as fallback.
	Intervals map[string][]string `yaml:"intervals"`
	// Images to load into the bootstrap cluster and the management cluster's nodes.
	Images []Image `yaml:"images"`
	// Clusterctl says where providers come from.
	Clusterctl Clusterctl `yaml:"clusterctl"`
	// VSphere is the vCenter the OVA stage (and, on the vsphere profile, CAPV) talk to.
	VSphere VSphere `yaml:"vsphere"`
	// OVA lists the node OVAs to import as templates.
	OVA OVAStage `yaml:"ova"`
	// Clusters names and sizes the clusters of a run.
	Clusters Clusters `yaml:"clusters"`
	// Addons are manifests applied to clusters the harness creates.
	Addons Addons `yaml:"addons"`
	// Placement points at the pod placement matrix.
	Placement Placement `yaml:"placement"`
	// Packages points at the expected PackageInstall lists.
	Packages Packages `yaml:"packages"`
	// Smoke configures the smoke workload on the workload cluster.
	Smoke Smoke `yaml:"smoke"`
	// Conformance configures Kubernetes' conformance tests on the workload cluster.
	Conformance Conformance `yaml:"conformance"`
	// Upgrade configures the upgrade stage (clusters.upgrade is its cluster).
	Upgrade Upgrade `yaml:"upgrade"`
	// ProviderUpgrade configures the provider-upgrade stage
	// (clusters.providerUpgrade and clusters.providerUpgradeWorkload).
	ProviderUpgrade ProviderUpgrade `yaml:"providerUpgrade"`
	// Artifacts tunes collection.
	Artifacts Artifacts `yaml:"artifacts"`
	// Cleanup says how the run's clusters are deleted at the end.
	Cleanup Cleanup `yaml:"cleanup"`
	// Rehearsal says how far the flow can go against a stand-in vCenter (vcsim).
	Rehearsal Rehearsal `yaml:"rehearsal"`
	// Host says what the machine that runs the nodes must have.
	Host Host `yaml:"host"`
	// Lease, when set, takes the run's testbed from a Boskos pool: its user
	// data supplies the profile's variables (VSPHERE_SERVER, ...).
	Lease *Lease `yaml:"lease"`

	// Source is the profile file this config was loaded from (absolute).
	Source string `yaml:"-"`
	// Overrides are the override files merged over it, in order.
	Overrides []string `yaml:"-"`
	// DeferredVariables are the unset variables a config with a lease
	// expects from the leased testbed's user data (loaded without it yet).
	DeferredVariables []string `yaml:"-"`

	// intervalKeys is the registry the intervals were validated against;
	// driverIntervalKeys the keys only a driver reads (driver → scope → keys).
	intervalKeys       map[string][]string
	driverIntervalKeys map[string]map[string][]string
	// infra is where the clusters' nodes run, chosen from
	// clusterctl.infrastructureProviders when the config is loaded.
	infra infrastructure.Infrastructure
}

// Tanzu configures the tanzu driver (framework/tanzu).
type Tanzu struct {
	// CLI is the tanzu binary; empty reads TANZU_CLI from the environment.
	// A bare name is looked up in PATH; a relative path is relative to the
	// file that sets it.
	CLI string `yaml:"cli"`
	// Verbosity is the CLI's -v; 0 means 9, what seed 000 ran with and what
	// the transcript's phase markers need.
	Verbosity int `yaml:"verbosity"`
	// KillGrace is how long the CLI's process group has between SIGINT (at
	// a timeout or Ctrl-C) and SIGKILL, e.g. "30s" (the default).
	KillGrace string `yaml:"killGrace"`
	// ConfigValues are extra TKG cluster configuration variables written
	// into every cluster configuration file the driver generates
	// (CLUSTER_PLAN, CONTROL_PLANE_MACHINE_TYPE, ...). The keys the harness
	// derives from the profile (CLUSTER_NAME, NAMESPACE, the vCenter
	// credentials) cannot be set here.
	ConfigValues map[string]string `yaml:"configValues"`
}

// Image is a container image to make available to the clusters.
type Image struct {
	Name string `yaml:"name"`
	// LoadBehavior is mustLoad (a failed load fails the run) or tryLoad (a
	// failed load is a warning, the node pulls). Defaults to mustLoad.
	LoadBehavior string `yaml:"loadBehavior"`
	// Roles are the clusters whose nodes get the image: bootstrap,
	// management, workload (empty: every cluster). A workload cluster has
	// no use for Cluster API's controllers or cert-manager; loading them
	// costs seconds per image and node.
	Roles []string `yaml:"roles"`
}

// ImageRoles are the values of images[].roles.
var ImageRoles = []string{"bootstrap", "management", "workload", "windows-workload"}

// ForRole reports whether the image is loaded into the nodes of a cluster
// of role.
func (i Image) ForRole(role string) bool {
	return len(i.Roles) == 0 || slices.Contains(i.Roles, role)
}

// Clusterctl configures `clusterctl init`.
type Clusterctl struct {
	// ConfigPath is a clusterctl config file whose providers and cert-manager
	// URL are used (the offline kit's file:// repository). Empty means
	// clusterctl's built-in release URLs.
	ConfigPath string `yaml:"configPath"`
	// CoreProvider, BootstrapProviders, ControlPlaneProviders and
	// InfrastructureProviders are clusterctl provider names, optionally name:version.
	CoreProvider            string   `yaml:"coreProvider"`
	BootstrapProviders      []string `yaml:"bootstrapProviders"`
	ControlPlaneProviders   []string `yaml:"controlPlaneProviders"`
	InfrastructureProviders []string `yaml:"infrastructureProviders"`
}

// VSphere is the vCenter target.
type VSphere struct {
	// Simulator starts govmomi's vcsim in-process and uses it as the vCenter;
	// server and credentials are then ignored.
	Simulator bool   `yaml:"simulator"`
	Server    string `yaml:"server"`
	Username  string `yaml:"username"`
	// Password must be a ${VAR} reference or come from PasswordFile; a literal
	// password in a config file is rejected.
	Password     Secret `yaml:"password"`
	PasswordFile string `yaml:"passwordFile"`
	// TLSThumbprint pins the server certificate (SHA-1, colon separated); or
	// set Insecure. With neither, the certificate is verified against the
	// system's trusted roots plus CAFile.
	TLSThumbprint string `yaml:"tlsThumbprint"`
	Insecure      bool   `yaml:"insecure"`
	// CAFile is a PEM bundle of CA certificates (vCenter's VMCA root, say)
	// trusted in addition to the system roots; checked at load.
	CAFile       string `yaml:"caFile"`
	Datacenter   string `yaml:"datacenter"`
	Folder       string `yaml:"folder"`
	Datastore    string `yaml:"datastore"`
	ResourcePool string `yaml:"resourcePool"`
	Network      string `yaml:"network"`
	// StoragePolicy is CAPV's VSPHERE_STORAGE_POLICY; empty uses the datastore.
	StoragePolicy string `yaml:"storagePolicy"`
	// SSHAuthorizedKey is put on every node (CAPV's VSPHERE_SSH_AUTHORIZED_KEY).
	SSHAuthorizedKey string `yaml:"sshAuthorizedKey"`
	// CustomVMXKeys are set on every VM CAPV clones (VSphereMachineTemplate
	// spec.template.spec.customVMXKeys), e.g. guestinfo keys or vcsim's
	// RUN.container backing.
	CustomVMXKeys map[string]string `yaml:"customVMXKeys"`
	// PowerOffMode overrides CAPV's powerOffMode on every machine template
	// (hard, soft, trySoft; empty keeps the template's, trySoft).
	PowerOffMode string `yaml:"powerOffMode"`
	// NodeSSH, when set, lets the artifacts collect node logs over SSH.
	NodeSSH NodeSSH `yaml:"nodeSSH"`
}

// NodeSSH is how the artifacts reach vSphere nodes (CAPV's default user is capv).
type NodeSSH struct {
	User    string `yaml:"user"`
	KeyFile string `yaml:"keyFile"`
}

// Rehearsal describes a stand-in vCenter whose VMs run no guest OS (vcsim):
// cluster stages stop, classified, once a real vCenter would boot the nodes.
type Rehearsal struct {
	// StopAfter is empty (a real vCenter: run everything) or "provisioned":
	// stop a cluster stage once every Machine that can be provisioned before
	// its control plane answers has a cloned, powered-on VM with an IP and a
	// providerID.
	StopAfter string `yaml:"stopAfter"`
	// Reason is quoted in the stop message and the summary.
	Reason string `yaml:"reason"`
}

// OVAStage configures the ova stage.
type OVAStage struct {
	// Concurrency is how many OVAs import at once.
	Concurrency int `yaml:"concurrency"`
	// DeleteTemplates removes the run's imported templates at cleanup; by
	// default they are kept (the next run reuses them) and reported as kept.
	DeleteTemplates bool `yaml:"deleteTemplates"`
	// Replace imports an OVA whose template name is taken by a template of
	// another OVA: the old template is renamed aside (<name>.replaced-<time>)
	// and kept, the new one takes the name. Without it that is an error.
	Replace bool `yaml:"replace"`
	// MaxDownloadSize bounds one OVA downloaded from a URL, e.g. "20Gi"
	// (the default); a larger download stops with an error.
	MaxDownloadSize string `yaml:"maxDownloadSize"`
	// Images are the OVAs to import.
	Images []OVA `yaml:"images"`
}

// OVA is one node OVA.
type OVA struct {
	// Name of the template in vCenter.
	Name string `yaml:"name"`
	// Source is a local path or an http(s) URL. With Generate set, the OVA is
	// written there first (test OVAs are generated, never committed).
	Source string `yaml:"source"`
	// SHA256 of the whole OVA (from the release's checksum file). A
	// download is checked before vCenter is asked anything; a local file on
	// its one read (the reuse hash pass, or the upload, which a mismatch
	// stops before its last bytes, removing the VM). Required for an
	// http:// source, optional for https and local files. Without it, an
	// OVA whose manifest pins every file with SHA256 or SHA512 is identified
	// by its manifest and not hashed as a whole.
	SHA256 string `yaml:"sha256"`
	// Generate synthesizes a test OVA carrying Properties (local profile).
	Generate *GenerateOVA `yaml:"generate"`
	// Properties are the vApp properties the template must carry
	// (VERSION, KUBERNETES_SEMVER, DISTRO_NAME, DISTRO_VERSION, DISTRO_ARCH);
	// they are checked in the OVA's descriptor before it is uploaded.
	Properties map[string]string `yaml:"properties"`
}

// GenerateOVA describes a synthesized test OVA.
type GenerateOVA struct {
	DiskMiB int `yaml:"diskMiB"`
}

// Clusters are the clusters of a run.
type Clusters struct {
	// UniqueNames (default true) appends "-<run short ID>" to every cluster
	// name when a run starts (tkg-e2e-mgmt-k3f9a; SetRunNames), so runs that
	// share a Docker host or a vCenter never share a cluster name. false
	// keeps the names as written (an overrides file that must know them).
	UniqueNames *bool            `yaml:"uniqueNames"`
	Bootstrap   BootstrapCluster `yaml:"bootstrap"`
	Management  WorkloadCluster  `yaml:"management"`
	Workload    WorkloadCluster  `yaml:"workload"`
	// Workloads are more workload clusters, made from the management
	// cluster beside the first (IDs workload-2, workload-3, ...), checked
	// by every check that checks workload clusters, and cleaned up with it.
	// A field a cluster leaves unset takes the first workload cluster's
	// value (name excepted: each needs its own).
	Workloads []WorkloadCluster `yaml:"workloads"`
	// Upgrade is the upgrade stage's own workload cluster (ID upgrade):
	// made by the management cluster at the previous release and upgraded
	// to upgrade.kubernetesVersion. What it leaves unset comes from the
	// first workload cluster, as for clusters.workloads. Unset: the
	// profile has no upgrade stage.
	Upgrade *WorkloadCluster `yaml:"upgrade"`
	// ProviderUpgrade is the provider-upgrade stage's management cluster
	// (ID provider-upgrade), made by the run's management cluster with
	// providerUpgrade.from's providers and upgraded to providerUpgrade.to;
	// unset fields come from clusters.management.
	ProviderUpgrade *WorkloadCluster `yaml:"providerUpgrade"`
	// ProviderUpgradeWorkload is the workload cluster that management
	// cluster makes and must still manage after the upgrade (ID
	// provider-upgrade-workload); unset fields come from clusters.workload.
	ProviderUpgradeWorkload *WorkloadCluster `yaml:"providerUpgradeWorkload"`
	// NodeDeletionTimeoutSeconds, when set, is written on every cluster's
	// control plane and MachineDeployments (spec.topology...deletion): how
	// long Cluster API retries deleting a removed Machine's Node. 0 retries
	// until it is gone. Cluster API's default, 10 s, counts from the
	// Machine's deletion, so after a drain one failed attempt (the cluster's
	// API out while its control plane is replaced) deletes the Machine and
	// leaves its Node behind, NotReady for good (cluster-api#14024; a
	// self-hosted upgrade here, 2026-11-29). Unset keeps the default.
	NodeDeletionTimeoutSeconds *int32 `yaml:"nodeDeletionTimeoutSeconds"`
}

// BootstrapCluster is the kind cluster.
type BootstrapCluster struct {
	Name string `yaml:"name"`
	// NodeImage is passed by tag (never a digest: a locally built image has none).
	NodeImage string `yaml:"nodeImage"`
}

// WorkloadCluster is a Cluster API cluster (the management cluster is one too).
type WorkloadCluster struct {
	Name                     string `yaml:"name"`
	Namespace                string `yaml:"namespace"`
	Flavor                   string `yaml:"flavor"`
	KubernetesVersion        string `yaml:"kubernetesVersion"`
	ControlPlaneMachineCount int    `yaml:"controlPlaneMachineCount"`
	WorkerMachineCount       int    `yaml:"workerMachineCount"`
	// Variables are clusterctl variables for this cluster only, over the
	// profile's (e.g. its own CONTROL_PLANE_ENDPOINT_IP).
	Variables map[string]string `yaml:"variables"`
	// TopologyVariables are set on the Cluster's spec.topology.variables
	// (ClusterClass variables, e.g. quick-start's etcdImageTag and
	// coreDNSImageTag: kubeadm v1.32 defaults to older tags than the
	// images built here).
	TopologyVariables map[string]string `yaml:"topologyVariables"`
}

// Upgrade configures the day-two stages: the Kubernetes upgrade's target
// and the availability bounds the rollout is held to.
type Upgrade struct {
	// KubernetesVersion is the version clusters.upgrade is upgraded to (the
	// release under test); it must be newer than the cluster's.
	KubernetesVersion string `yaml:"kubernetesVersion"`
	// Cluster, when set, is the ID of a workload cluster the workload stage
	// makes (workload, workload-2, ...) that the upgrade stage upgrades
	// instead of making clusters.upgrade: one cluster fewer to make, keep
	// running and delete, and the one upgraded has passed every day-one
	// check at its older version (its entry's kubernetesVersion).
	Cluster string `yaml:"cluster"`
	// APIOutageBound and ServiceOutageBound bound the total time the API
	// server's /readyz and the probe Service did not answer from outside
	// the cluster while it rolled (e.g. 10s, 5s).
	APIOutageBound     string `yaml:"apiOutageBound"`
	ServiceOutageBound string `yaml:"serviceOutageBound"`
	// ManagementAPIOutageBound bounds the API server outage of the
	// management-upgrade stage's self-hosted management cluster (empty:
	// only reported). Its controllers run on the Machines being replaced,
	// so it is bounded on its own.
	ManagementAPIOutageBound string `yaml:"managementAPIOutageBound"`
}

// Addons are manifests (path or URL) applied to created clusters.
type Addons struct {
	// CNIManifest is applied to every Cluster API cluster once its API answers.
	CNIManifest string `yaml:"cniManifest"`
	// KappControllerManifest installs kapp-controller on management and workload clusters.
	KappControllerManifest string `yaml:"kappControllerManifest"`
}

// Placement configures the placement stage.
type Placement struct {
	// Matrix is the placement matrix file (config/placement/*.yaml).
	Matrix string `yaml:"matrix"`
}

// Packages configures the packages stage.
type Packages struct {
	// Expected is the expected PackageInstall list (config/packages/*.yaml).
	Expected string `yaml:"expected"`
	// InstallLocalSet installs the harness's small package set (local profile),
	// so the reconcile check runs against a real kapp-controller.
	InstallLocalSet bool `yaml:"installLocalSet"`
}

// Smoke configures the smoke stage: a workload spread over the workload
// cluster's nodes, a Service, DNS and requests across nodes.
type Smoke struct {
	// Image serves HTTP and runs the client (busybox: httpd, wget, nslookup).
	// It must be among the images the workload cluster gets, or pullable.
	Image string `yaml:"image"`
}

// Conformance configures the conformance stage (Kubernetes' e2e.test in the
// conformance image, run by Cluster API's kubetest).
type Conformance struct {
	// KubetestConfig is a kubetest config file: e2e.test flags as flat YAML
	// (ginkgo.focus, ginkgo.skip, ...), Cluster API's format.
	KubetestConfig string `yaml:"kubetestConfig"`
	// Image is the conformance image; empty means
	// registry.k8s.io/conformance:<the workload cluster's kubernetesVersion>.
	Image string `yaml:"image"`
	// Pull lets missing images be pulled (a machine with registry access);
	// without it a missing conformance image fails before the run.
	Pull bool `yaml:"pull"`
	// Images are the test images the selection needs, loaded into the
	// workload cluster's nodes when they are containers (CAPD).
	Images []Image `yaml:"images"`
	// GinkgoNodes run tests in parallel (kubetest's default 1).
	GinkgoNodes int `yaml:"ginkgoNodes"`
	// NotSelected says why the conformance tests the selection leaves out
	// are not run by this profile: their skip reason in the report.
	NotSelected string `yaml:"notSelected"`
}

// Artifacts tunes collection.
type Artifacts struct {
	// MaxFileSize caps one collected file, e.g. "5Mi"; a cut file ends with a note.
	MaxFileSize string `yaml:"maxFileSize"`
	// ItemTimeout bounds one collection item (one pod's logs, one node's journal).
	ItemTimeout string `yaml:"itemTimeout"`
}

// Host says what the machine that runs kind and CAPD nodes must have.
type Host struct {
	// DiskPerNodeGiB is the disk one kind or CAPD node takes where Docker
	// keeps containers (its /var volume holds a copy of the node image's
	// images and every image loaded into it). Before a cluster of
	// containers is made, nodes × this must be free there, so a full disk
	// fails in a second, naming the cluster, instead of slowing every
	// stage after it for an hour. Unset: DefaultDiskPerNodeGiB; 0: no check.
	DiskPerNodeGiB *float64 `yaml:"diskPerNodeGiB"`
}

// DefaultDiskPerNodeGiB: measured on the local profile (2026-11-27), a
// workload node's volume took 1.3 GiB, a management node's 2.2 to 2.7 GiB
// (the providers' images), and a node image load writes its archive first.
const DefaultDiskPerNodeGiB = 2.0

// DiskPerNode is host.diskPerNodeGiB, or its default.
func (h Host) DiskPerNode() float64 {
	if h.DiskPerNodeGiB == nil {
		return DefaultDiskPerNodeGiB
	}
	return *h.DiskPerNodeGiB
}

// Cleanup says how the run's clusters are deleted (framework/config/cleanup.go).
type Cleanup struct {
	// SelfHosted is how a self-hosted management cluster (after clusterctl
	// move; it cannot delete itself) is deleted: moveBack (the default;
	// every provider) moves it back into a throw-away kind cluster and
	// deletes it there, as `tanzu management-cluster delete` does;
	// removeContainers removes the node and load balancer containers the
	// run recorded, by ID (CAPD only: valid when every infrastructure
	// provider is docker). With driver: tanzu the CLI deletes the
	// management cluster whatever this says.
	SelfHosted string `yaml:"selfHosted"`
	// StageSelfHosted is the same choice for a self-hosted management
	// cluster a day-two stage made for itself (management-upgrade's, ID
	// provider-upgrade), not the run's own: empty (the default) follows
	// SelfHosted (Config.RemovesStageSelfHostedContainers). A run that
	// moves its own management cluster back has proved that path once;
	// removeContainers spares the stage's cluster a second move-back (CAPD
	// only, as for SelfHosted).
	StageSelfHosted string `yaml:"stageSelfHosted"`
	// Managed is how a cluster a management cluster manages (the workload
	// cluster) is deleted: delete (the default; every provider) deletes it
	// through its management cluster, as `tanzu cluster delete` does;
	// removeContainers removes the node and load balancer containers the
	// run recorded, by ID (CAPD only, as for SelfHosted). With driver: tanzu
	// the CLI deletes it whatever this says.
	Managed string `yaml:"managed"`
}

// Lease says which Boskos pool a run takes its testbed from. The leased
// resource's user data is a map of the profile's variables (VSPHERE_SERVER,
// VSPHERE_DATACENTER, ...), used as if an overrides file set them.
type Lease struct {
	// URL of the Boskos server, e.g. http://boskos.test-pods.svc.cluster.local.
	URL string `yaml:"url"`
	// Type is the Boskos resource type, e.g. vsphere-testbed.
	Type string `yaml:"type"`
	// Owner the lease is taken for; the run ID when empty.
	Owner string `yaml:"owner"`
	// AcquireTimeout bounds the wait for a free testbed; AcquirePoll is the
	// time between tries; Heartbeat the period of the /update that keeps
	// the lease (Go durations).
	AcquireTimeout string `yaml:"acquireTimeout"`
	AcquirePoll    string `yaml:"acquirePoll"`
	Heartbeat      string `yaml:"heartbeat"`
	// SecretKeys are the user data keys that hold secrets (VSPHERE_PASSWORD):
	// only these secret-named keys are read, and their values are redacted
	// like the password. A secret-named key not listed here is ignored.
	SecretKeys []string `yaml:"secretKeys"`
}
