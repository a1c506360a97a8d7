package tanzucli

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/infrastructure"
	"github.com/tkg-e2e/harness/framework/kind"
	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/framework/vsphere"
	"github.com/tkg-e2e/harness/internal/testutil"
	"github.com/tkg-e2e/harness/suites"
)

// These tests run the tanzu driver's stage wiring against the stand-in CLI
// (framework/tanzu/standin, replaying seed 000 a thousand times faster)
// with a fake kind kubeconfig: no Docker, no cluster. What needs a real
// cluster (the harness's checks after the CLI, the workload's kubeconfig
// Secret, the leak checks) is left to the e2e run with the stand-in.

type syncBuffer = testutil.SyncBuffer

// Lifecycle is the lifecycle registry as suites/lifecycle builds it (which
// imports this package).
var Lifecycle = suites.MustRegistry(suites.TeardownScopes, suites.LifecycleStages...).WithProvisioners(Provisioner)

const fakeKindName = "tkg-kind-cf3e9a"

// fakeKindKubeconfig is what the stand-in hands out as the bootstrap
// cluster's kubeconfig: a kind context, a server nothing listens on.
const fakeKindKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: kind-` + fakeKindName + `
  cluster: {server: "https://127.0.0.1:1"}
contexts:
- name: kind-` + fakeKindName + `
  context: {cluster: kind-` + fakeKindName + `, user: kind-` + fakeKindName + `}
current-context: kind-` + fakeKindName + `
users:
- name: kind-` + fakeKindName + `
  user: {token: fake-token-for-the-stand-in}
`

// tanzuEnv builds the Env of a run with the shipped local profile and
// driver: tanzu, the stand-in as TANZU_CLI, everything in temp folders.
func tanzuEnv(t *testing.T) (*suites.Env, *syncBuffer) {
	t.Helper()
	return tanzuEnvWith(t, "../../config/local.yaml")
}

// tanzuEnvWith is tanzuEnv with another shipped profile; the vSphere
// profile gets its VSPHERE_* from the environment, as on a testbed.
func tanzuEnvWith(t *testing.T, profile string) (*suites.Env, *syncBuffer) {
	t.Helper()
	dir := t.TempDir()
	standin := filepath.Join(dir, "tanzu")
	gobin := filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		gobin = "go"
	}
	if out, err := exec.Command(gobin, "build", "-o", standin, "../../framework/tanzu/standin").CombinedOutput(); err != nil {
		t.Fatalf("building the stand-in tanzu CLI: %v\n%s", err, out)
	}
	kc := filepath.Join(dir, "kind.kubeconfig")
	files := map[string]string{"cni.yaml": "x: 1\n", "kapp.yaml": "x: 1\n", "kind.kubeconfig": fakeKindKubeconfig,
		"tanzu.yaml": "driver: tanzu\ntanzu:\n  cli: ${TANZU_CLI}\n  configValues:\n    CLUSTER_PLAN: prod\n"}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range map[string]string{"CNI_MANIFEST": filepath.Join(dir, "cni.yaml"), "KAPP_CONTROLLER_MANIFEST": filepath.Join(dir, "kapp.yaml"),
		"TANZU_CLI": standin, "XDG_CACHE_HOME": filepath.Join(dir, "cache"), "TANZU_STANDIN_SPEED": "1000",
		"TANZU_STANDIN_KUBECONFIG": kc, "TANZU_STANDIN_SCENARIO": "clean", "TANZU_STANDIN_KIND_NAME": fakeKindName} {
		t.Setenv(k, v)
	}
	if strings.Contains(profile, "vsphere") {
		ova := filepath.Join(dir, "u.ova")
		if err := os.WriteFile(ova, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		for k, v := range map[string]string{"VSPHERE_SERVER": "vc.example.com", "VSPHERE_USERNAME": "administrator@vsphere.local",
			"VSPHERE_PASSWORD": echoedPassword, "VSPHERE_DATACENTER": "/dc0", "VSPHERE_FOLDER": "/dc0/vm", "VSPHERE_DATASTORE": "ds",
			"VSPHERE_RESOURCE_POOL": "rp", "VSPHERE_NETWORK": "VM Network", "VSPHERE_INSECURE": "true", "OVA_UBUNTU": ova,
			"VSPHERE_SSH_AUTHORIZED_KEY": "ssh-ed25519 AAAA e2e", "MANAGEMENT_CONTROL_PLANE_ENDPOINT_IP": "10.0.0.50",
			"WORKLOAD_CONTROL_PLANE_ENDPOINT_IP": "10.0.0.51"} {
			t.Setenv(k, v)
		}
	}
	out := &syncBuffer{}
	env, err := suites.NewEnv(suites.EnvOptions{Registry: Lifecycle, ConfigPath: profile, Overrides: []string{filepath.Join(dir, "tanzu.yaml")},
		ArtifactFolder: filepath.Join(dir, "artifacts", "run"), Out: out})
	if err != nil {
		t.Fatalf("NewEnv with driver: tanzu: %v", err)
	}
	t.Cleanup(func() { _ = env.State.Close() })
	return env, out
}

func runCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func managementInput(t *testing.T, env *suites.Env) TanzuManagementInput {
	t.Helper()
	cli, err := CLIOf(env)
	if err != nil {
		t.Fatal(err)
	}
	spec := env.Config.Clusters.Management
	return TanzuManagementInput{Env: env, CLI: cli, Cluster: spec, Values: tanzuConfigValues(env.Config, suites.RoleManagement, spec, ""),
		Infrastructure: env.Config.Infrastructure(), Timeout: env.Interval("management", "tanzu-create").Timeout}
}

func stepNames(ss []suites.Step) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Name)
	}
	return out
}

// The registry keeps its stages and labels with the tanzu driver, so FOCUS
// selects the same stages; the driver's specs, keys and kinds are bound in.
func TestTanzuDriverKeepsTheStagesAndLabels(t *testing.T) {
	if Lifecycle.ForDriver(config.DriverClusterctl) != Lifecycle {
		t.Error("the clusterctl driver must leave the registry as it is")
	}
	reg := Lifecycle.ForDriver(config.DriverTanzu)
	if !slices.Equal(reg.Names(), Lifecycle.Names()) {
		t.Errorf("stages %v, want %v", reg.Names(), Lifecycle.Names())
	}
	for _, s := range Lifecycle.Names() {
		if !slices.Equal(reg.Labels(s), Lifecycle.Labels(s)) {
			t.Errorf("labels of %s: %v, clusterctl %v", s, reg.Labels(s), Lifecycle.Labels(s))
		}
	}
	if c, _ := reg.Closure("move"); !slices.Equal(c, []string{"bootstrap", "management", "move"}) {
		t.Errorf("FOCUS=move plans %v", c)
	}
	for scope, key := range map[string]string{"bootstrap": "tanzu-version", "management": "tanzu-create", "workload": "tanzu-create", suites.ScopeCleanup: "tanzu-delete"} {
		if !reg.Registered(scope, key) {
			t.Errorf("%s/%s is not registered with the tanzu driver", scope, key)
		}
		if Lifecycle.Registered(scope, key) {
			t.Errorf("%s/%s is registered with clusterctl: it would be required of every profile", scope, key)
		}
	}
	if got := Lifecycle.DriverIntervalKeys()[config.DriverTanzu]["management"]; !slices.Equal(got, []string{"tanzu-create"}) {
		t.Errorf("DriverIntervalKeys management: %v", got)
	}
	if d, _ := reg.Get("bootstrap"); !strings.Contains(d.Doc, "tanzu management-cluster create") {
		t.Errorf("bootstrap doc with the tanzu driver: %q", d.Doc)
	}
	in := reg.Cleanup(suites.CleanupOptions{})
	for _, k := range []string{TanzuManagementKind, TanzuClusterKind, kind.ResourceKind} {
		if in.Deleters[k] == nil {
			t.Errorf("no deleter for %s with the tanzu driver", k)
		}
	}
	// One Docker leak check for the CLI's clusters (not one per stage), and
	// with a vCenter one more for its VMs.
	if base := Lifecycle.Cleanup(suites.CleanupOptions{}); len(in.LeakChecks) != len(base.LeakChecks)+1 {
		t.Errorf("the tanzu driver adds %d leak checks, want 1", len(in.LeakChecks)-len(base.LeakChecks))
	}
	vs := func(context.Context) (*vsphere.Session, error) { return nil, errors.New("not called") }
	withVC, baseVC := reg.Cleanup(suites.CleanupOptions{VSphere: vs}), Lifecycle.Cleanup(suites.CleanupOptions{VSphere: vs})
	if len(withVC.LeakChecks) != len(baseVC.LeakChecks)+2 {
		t.Errorf("with a vCenter the tanzu driver adds %d leak checks, want 2 (Docker, vCenter)", len(withVC.LeakChecks)-len(baseVC.LeakChecks))
	}
}

func TestTanzuConfigValues(t *testing.T) {
	env, _ := tanzuEnv(t)
	wl := env.Config.Clusters.Workload
	v := tanzuConfigValues(env.Config, suites.RoleWorkload, wl, wl.Namespace)
	// CLUSTER_PLAN: tanzu.configValues wins over the harness's default (dev).
	want := map[string]string{"CLUSTER_NAME": wl.Name, "NAMESPACE": wl.Namespace, "INFRASTRUCTURE_PROVIDER": "docker",
		"CLUSTER_PLAN": "prod", "WORKER_MACHINE_COUNT": strconv.Itoa(wl.WorkerMachineCount),
		"CONTROL_PLANE_MACHINE_COUNT": strconv.Itoa(wl.ControlPlaneMachineCount)}
	for k, w := range want {
		if v[k] != w {
			t.Errorf("%s = %q, want %q", k, v[k], w)
		}
	}
	if m := tanzuConfigValues(env.Config, suites.RoleManagement, env.Config.Clusters.Management, ""); m["NAMESPACE"] != "" {
		t.Errorf("the management cluster's file sets NAMESPACE %q: TKG puts it in tkg-system", m["NAMESPACE"])
	}
	if !strings.Contains(wl.Name, env.State.ShortID()) {
		t.Errorf("the cluster name %q does not carry the run's short ID: the CLI would reuse another run's name", wl.Name)
	}
}

// A clean `tanzu management-cluster create`: both clusters attached from
// the announced kubeconfigs, the kind cluster recorded and then dropped
// once the CLI deleted it, the phases as steps (the move among them), the
// transcript in the artifacts, the configuration file gone; then the move
// stage's phase check and kind bookkeeping, `tanzu cluster create`, and the
// cleanup's deletes through the CLI.
func TestTanzuManagementWorkloadAndCleanupWithTheStandIn(t *testing.T) {
	env, out := tanzuEnv(t)
	ctx := runCtx(t)
	in := managementInput(t, env)

	res, err := TanzuManagementCreate(ctx, in)
	if err != nil {
		t.Fatalf("clean management create: %v\n%s", err, out)
	}
	name := env.Config.Clusters.Management.Name
	mgmt := env.Cluster(suites.RoleManagement)
	if mgmt == nil || mgmt.Name != name || mgmt.Namespace != "tkg-system" || !infrastructure.Same(mgmt.Infrastructure, infrastructure.Docker) ||
		mgmt.Kubeconfig != filepath.Join(in.CLI.Home, ".kube", "config") {
		t.Fatalf("management cluster in the Env: %+v", mgmt)
	}
	if b, err := os.ReadFile(mgmt.Kubeconfig); err != nil || string(b) != fakeKindKubeconfig {
		t.Errorf("the management kubeconfig the Env points at: %v", err)
	}
	if r, ok := env.State.Resource(TanzuManagementKind, name); !ok || r.State != "ready" || r.Kubeconfig != mgmt.Kubeconfig ||
		!strings.Contains(r.DeleteHint, "management-cluster delete") {
		t.Errorf("management cluster in the state: %+v (%v)", r, ok)
	}
	kr, ok := env.State.Resource(kind.ResourceKind, fakeKindName)
	if !ok || kr.Role != suites.RoleBootstrap || kr.CreatedBy != "management" || !strings.HasPrefix(kr.Kubeconfig, filepath.Join(in.CLI.Home, ".kube-tkg", "tmp")) {
		t.Errorf("kind cluster in the state: %+v (%v)", kr, ok)
	}
	if !strings.Contains(out.String(), "kind bootstrap cluster "+fakeKindName+" attached") {
		t.Errorf("the kind cluster was never attached:\n%s", out)
	}
	if env.Cluster(suites.RoleBootstrap) != nil {
		t.Error("the CLI deleted kind after the move, but the Env still has it: collection would chase a deleted cluster")
	}
	steps := stepNames(phaseSteps(res.Phases))
	for _, want := range []string{"tanzu/bootstrap-create", "tanzu/management-create", "tanzu/move", "tanzu/bootstrap-delete"} {
		if !slices.Contains(steps, want) {
			t.Errorf("steps %v lack %s", steps, want)
		}
	}
	tr, err := os.ReadFile(env.Path("tanzu", "management-cluster-create.log"))
	if err != nil || !strings.Contains(string(tr), "Management cluster created!") {
		t.Errorf("transcript in the artifacts: %v", err)
	}
	if _, err := os.Stat(env.Path("tanzu", "management-cluster-create.result.json")); err != nil {
		t.Errorf("the command's result is not in the artifacts: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(in.CLI.WorkDir, "tanzu-config-*")); len(left) > 0 {
		t.Errorf("the cluster configuration file was not removed: %v", left)
	}
	if inside, _ := filepath.Rel(env.ArtifactFolder, in.CLI.Home); !strings.HasPrefix(inside, "..") {
		t.Errorf("the CLI's HOME %s (it holds kubeconfigs) is inside the artifacts %s", in.CLI.Home, env.ArtifactFolder)
	}

	// The move stage: the move's phases, and the kind cluster confirmed
	// gone (a stand-in for the Docker check) and marked deleted.
	mv, err := tanzuMovePhases(tanzuResult(env, suites.RoleManagement))
	if err != nil || !slices.Equal(stepNames(phaseSteps(mv)), []string{"tanzu/move-prepare", "tanzu/move", "tanzu/bootstrap-delete"}) {
		t.Errorf("move steps %v, %v", stepNames(phaseSteps(mv)), err)
	}
	// The phases reach timings.json through the stage's steps in the run state.
	if err := recordPhases(env.Run, "move", mv); err == nil {
		t.Error("steps of a stage that has not started were recorded")
	}
	if err := env.State.StartStage("move"); err != nil {
		t.Fatal(err)
	}
	if err := recordPhases(env.Run, "move", mv); err != nil {
		t.Fatal(err)
	}
	if got := env.State.StageSteps()["move"]; len(got) != 3 || got[1].Name != "tanzu/move" || got[1].Started.IsZero() {
		t.Errorf("move steps in the run state: %+v", got)
	}
	var asked []string
	if err := tanzuBootstrapGone(ctx, env, func(_ context.Context, n string) error { asked = append(asked, n); return nil }); err != nil {
		t.Fatal(err)
	}
	if r, _ := env.State.Resource(kind.ResourceKind, fakeKindName); !slices.Equal(asked, []string{fakeKindName}) || r.State != "deleted" {
		t.Errorf("asked about %v; kind cluster state %q", asked, r.State)
	}

	// The workload: `tanzu cluster create` with its own file.
	cli, _ := CLIOf(env)
	wl := env.Config.Clusters.Workload
	wres, err := TanzuClusterCreate(ctx, TanzuWorkloadSpecInput{Env: env, CLI: cli, Cluster: wl,
		Values: tanzuConfigValues(env.Config, suites.RoleWorkload, wl, wl.Namespace), Infrastructure: infrastructure.Docker,
		Timeout: env.Interval("workload", "tanzu-create").Timeout, WaitAPI: env.Interval("workload", "wait-api"),
		Ready: env.Interval("workload", "wait-cluster")})
	if err != nil {
		t.Fatalf("clean cluster create: %v\n%s", err, out)
	}
	if !wres.Completed || wres.ClusterName != wl.Name || !slices.Contains(stepNames(phaseSteps(wres.Phases)), "tanzu/workload-nodes") {
		t.Errorf("cluster create: completed %v, cluster %q, phases %v", wres.Completed, wres.ClusterName, stepNames(phaseSteps(wres.Phases)))
	}
	if r, ok := env.State.Resource(TanzuClusterKind, wl.Name); !ok || r.State != "ready" || r.Namespace != wl.Namespace {
		t.Errorf("workload cluster in the state: %+v (%v)", r, ok)
	}

	// Cleanup: the deleters run the CLI (workload, then management).
	cin := env.Registry.Cleanup(env.CleanupOptions())
	for _, r := range []run.Resource{{Kind: TanzuClusterKind, Name: wl.Name}, {Kind: TanzuManagementKind, Name: name}} {
		how, err := cin.Deleters[r.Kind](ctx, r)
		if err != nil || !strings.Contains(how, "tanzu ") {
			t.Errorf("deleting %s: %q, %v", r.Key(), how, err)
		}
	}
	if _, err := os.Stat(env.Path("tanzu", "management-cluster-delete.log")); err != nil {
		t.Errorf("the delete's transcript is not in the artifacts: %v", err)
	}
}
