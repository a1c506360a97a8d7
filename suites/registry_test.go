package suites_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tkg-e2e/harness/framework/artifacts/report"
	"github.com/tkg-e2e/harness/framework/clusters"
	"github.com/tkg-e2e/harness/framework/config"
	"github.com/tkg-e2e/harness/framework/kind"
	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/framework/vsphere"
	"github.com/tkg-e2e/harness/suites"
	"github.com/tkg-e2e/harness/suites/lifecycle"
	"github.com/tkg-e2e/harness/suites/tanzucli"
)

// withScratch is the lifecycle registry plus the scratch stage: one entry.
func withScratch(t *testing.T) *suites.Registry {
	t.Helper()
	r, err := suites.NewRegistry(suites.TeardownScopes, append(lifecycle.Registry.Stages(), Scratch, ScratchEach)...)
	if err != nil {
		t.Fatal(err)
	}
	return r.WithProvisioners(tanzucli.Provisioner)
}

// Everything that used to be edited by hand for a new stage follows from the
// one registry entry.
func TestAddingAStageIsOneEntry(t *testing.T) {
	r := withScratch(t)
	if got := r.Names(); got[len(got)-2] != "scratch" {
		t.Errorf("run order: %v", got)
	}
	if !slices.Contains(r.Labels("ova"), "scratch") || !slices.Equal(r.Labels("scratch"), []string{"scratch"}) {
		t.Errorf("labels: ova %v, scratch %v", r.Labels("ova"), r.Labels("scratch"))
	}
	if c, _ := r.Closure("scratch"); !slices.Equal(c, []string{"ova", "scratch"}) {
		t.Errorf("plan of FOCUS=scratch: %v", c)
	}
	if !slices.Equal(r.IntervalKeys()["scratch"], []string{"wait-pods"}) {
		t.Errorf("interval keys: %v", r.IntervalKeys()["scratch"])
	}
	if c, ok := r.Category("scratch"); !ok || c != report.Infrastructure {
		t.Errorf("category: %q %v", c, ok)
	}
	in := r.Cleanup(suites.CleanupOptions{})
	if in.Deleters["scratch-dir"] == nil || len(in.LeakChecks) <= len(lifecycle.Registry.Cleanup(suites.CleanupOptions{}).LeakChecks) {
		t.Errorf("cleanup does not know the scratch kind: %d deleters, %d leak checks", len(in.Deleters), len(in.LeakChecks))
	}
	// The shipped profile validates against the new registry: the stage's
	// key falls back to default/wait-pods.
	if _, err := config.Load(config.LoadOptions{Path: "../config/local.yaml", Intervals: r.IntervalKeys(), DriverIntervals: r.DriverIntervalKeys()}); err != nil {
		t.Errorf("config/local.yaml against the registry with scratch: %v", err)
	}
}

func TestRegistryRejectsAStageWithoutCleanupForItsKinds(t *testing.T) {
	bad := Scratch
	bad.Cleanup = nil
	if _, err := suites.NewRegistry(suites.TeardownScopes, suites.OVA, bad); err == nil || !strings.Contains(err.Error(), `"scratch" records [scratch-dir] but has no Cleanup`) {
		t.Errorf("accepted a stage that records a kind nobody deletes: %v", err)
	}
}

func TestRegistryRejectsAJoinAfterAnEarlierOrUnknownStage(t *testing.T) {
	early := suites.Move
	early.JoinAfter = "bootstrap"
	for name, stages := range map[string][]suites.Stage{
		`joins after "bootstrap", which is not registered after it`: {suites.OVA, suites.Bootstrap, suites.Management, early},
		`joins after "workload", which is not registered after it`:  {suites.OVA, suites.Bootstrap, suites.Management, suites.Move},
	} {
		if _, err := suites.NewRegistry(suites.TeardownScopes, stages...); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("want %q, got %v", name, err)
		}
	}
	if j := lifecycle.Registry.JoinsAfter("workload"); len(j) != 1 || j[0].Name != "move" {
		t.Errorf("the move's settle period is joined after workload: %v", j)
	}
}

// Every key a stage registers resolves in both shipped profiles, and a key
// nobody registers is rejected.
func TestShippedProfilesLoad(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for _, name := range []string{"cni.yaml", "kapp.yaml", "clusterctl.yaml", "u.ova"} {
		files[name] = filepath.Join(dir, name)
		os.WriteFile(files[name], []byte("x: 1\n"), 0o644)
	}
	keys := lifecycle.Registry.IntervalKeys()
	for k, v := range map[string]string{"CNI_MANIFEST": files["cni.yaml"], "KAPP_CONTROLLER_MANIFEST": files["kapp.yaml"],
		"CLUSTERCTL_CONFIG": files["clusterctl.yaml"], "VSPHERE_SERVER": "vc.example.com", "VSPHERE_USERNAME": "u",
		"VSPHERE_PASSWORD": "p4ssw0rd!", "VSPHERE_DATACENTER": "/dc0", "VSPHERE_FOLDER": "/dc0/vm", "VSPHERE_DATASTORE": "ds",
		"VSPHERE_RESOURCE_POOL": "rp", "VSPHERE_NETWORK": "VM Network", "VSPHERE_INSECURE": "true", "OVA_UBUNTU": files["u.ova"],
		"VSPHERE_SSH_AUTHORIZED_KEY": "ssh-ed25519 AAAA e2e", "MANAGEMENT_CONTROL_PLANE_ENDPOINT_IP": "10.0.0.50",
		"WORKLOAD_CONTROL_PLANE_ENDPOINT_IP": "10.0.0.51"} {
		t.Setenv(k, v)
	}
	t.Setenv("CLEANUP_SELF_HOSTED", "")
	os.Unsetenv("CLEANUP_SELF_HOSTED") // restored by t.Setenv's cleanup
	// How each deletes a self-hosted management cluster: the vSphere
	// profile must move it back (removing containers would leave its VMs).
	selfHosted := map[string]string{"../config/local.yaml": config.SelfHostedRemoveContainers, "../config/vsphere.yaml": config.SelfHostedMoveBack}
	for _, p := range []string{"../config/local.yaml", "../config/vsphere.yaml"} {
		cfg, err := config.Load(config.LoadOptions{Path: p, Intervals: keys, DriverIntervals: lifecycle.Registry.DriverIntervalKeys()})
		if err != nil {
			t.Errorf("%s does not load against the stage registry:\n%v", p, err)
			continue
		}
		if cfg.Cleanup.SelfHosted != selfHosted[p] {
			t.Errorf("%s: cleanup.selfHosted = %q, want %q", p, cfg.Cleanup.SelfHosted, selfHosted[p])
		}
	}
	shrunk := map[string][]string{}
	for k, v := range keys {
		shrunk[k] = slices.DeleteFunc(slices.Clone(v), func(s string) bool { return s == "settle-after" })
	}
	_, err := config.Load(config.LoadOptions{Path: "../config/local.yaml", Intervals: shrunk, DriverIntervals: lifecycle.Registry.DriverIntervalKeys()})
	if err == nil || !strings.Contains(err.Error(), `unknown interval key "settle-after"`) {
		t.Errorf("a key no stage registers was accepted: %v", err)
	}
}

// TestScratchStageRuns runs the scratch stage in a real Ginkgo suite built
// the way e2e/ builds the lifecycle suite, from a registry.
func TestScratchStageRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a Ginkgo suite")
	}
	// The real ova stage (vcsim in-process) and the scratch stage that needs it.
	reg, err := suites.NewRegistry(suites.TeardownScopes, suites.OVA, Scratch, ScratchEach)
	if err != nil {
		t.Fatal(err)
	}
	reg = reg.WithProvisioners(tanzucli.Provisioner)
	folder := filepath.Join(t.TempDir(), "run")
	var env *suites.Env
	BeforeSuite(func(ctx SpecContext) {
		var err error
		// The shipped profile is validated against the whole lifecycle plus
		// scratch (it sets every lifecycle key); only ova and scratch run, and
		// only their cleanup, which needs no Docker.
		env, err = suites.NewEnv(suites.EnvOptions{Registry: withScratch(t), ConfigPath: "../config/local.yaml", ArtifactFolder: folder, Out: GinkgoWriter})
		Expect(err).NotTo(HaveOccurred())
		env.Registry = reg
		// The two workload clusters a run's workload stage would have made
		// (the scratch stages never reach their APIs).
		env.SetCluster(&suites.Cluster{Role: suites.RoleWorkload, Name: "wl-a"})
		env.SetCluster(&suites.Cluster{ID: "workload-2", Role: suites.RoleWorkload, Name: "wl-b"})
	})
	AfterSuite(func(ctx SpecContext) { suites.SuiteTeardown(ctx, env) })
	Describe("scratch suite", Ordered, func() {
		for _, s := range reg.Stages() {
			Context(s.Name, Label(reg.Labels(s.Name)...), func() {
				s.Spec(context.Background(), func() *suites.Env { return env })
			})
		}
	})
	RegisterFailHandler(Fail)
	if !RunSpecs(t, "scratch stage") {
		t.Fatal("the scratch suite failed")
	}
	for _, name := range []string{"ova", "scratch", "scratch-each"} {
		if rec, ok := env.State.Stage(name); !ok || rec.Status != "passed" {
			t.Fatalf("%s stage in the state: %+v", name, rec)
		}
	}
	// The stage that runs on every workload cluster: one result and one
	// file per cluster.
	rec, _ := env.State.Stage("scratch-each")
	if len(rec.Clusters) != 2 || rec.Clusters[0].ID != "workload" || rec.Clusters[0].Name != "wl-a" || rec.Clusters[1].ID != "workload-2" ||
		rec.Clusters[1].Name != "wl-b" || rec.Clusters[0].Status != "passed" || rec.Clusters[1].Status != "passed" {
		t.Fatalf("scratch-each's per-cluster results: %+v", rec.Clusters)
	}
	for id, name := range map[string]string{"workload": "wl-a", "workload-2": "wl-b"} {
		if b, err := os.ReadFile(filepath.Join(folder, "scratch-"+id+".txt")); err != nil || string(b) != name {
			t.Errorf("scratch-each's file for %s: %q, %v", id, b, err)
		}
	}
	if len(env.State.Live()) != 0 || !strings.HasPrefix(env.State.Cleanup, "done") {
		t.Fatalf("cleanup left %v (%s)", env.State.Live(), env.State.Cleanup)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(folder), "scratch")); !os.IsNotExist(err) {
		t.Fatalf("the scratch folder is still there: %v", err)
	}
}

// Deletions that only remove the run's containers by ID run beside each
// other; a delete through a management cluster, and a template, run alone.
func TestCleanupSaysWhichDeletionsRunBesideOthers(t *testing.T) {
	wl := run.Resource{Kind: clusters.ResourceKind, Name: "wl", Attributes: map[string]string{clusters.AttrManagedBy: "/m.kubeconfig"}}
	mgmt := run.Resource{Kind: clusters.ResourceKind, Name: "mgmt",
		Attributes: map[string]string{clusters.AttrManagedBy: "/m.kubeconfig", clusters.AttrSelfHosted: "true"}}
	kindCluster := run.Resource{Kind: kind.ResourceKind, Name: "boot"}
	template := run.Resource{Kind: vsphere.ResourceKind, Name: "ubuntu"}
	byID := suites.CleanupOptions{SelfHosted: clusters.RemoveContainers(""), SelfHostedByID: true, Managed: clusters.RemoveManaged("")}
	moveBack := func(context.Context, run.Resource) (string, error) { return "", nil }
	for _, c := range []struct {
		name string
		o    suites.CleanupOptions
		want map[string]bool
	}{
		{"every cluster by container ID", byID, map[string]bool{"wl": true, "mgmt": true, "boot": true, "ubuntu": false}},
		{"workload through its management cluster", suites.CleanupOptions{SelfHosted: clusters.RemoveContainers(""), SelfHostedByID: true},
			map[string]bool{"wl": false, "mgmt": true, "boot": true, "ubuntu": false}},
		{"management moved back", suites.CleanupOptions{SelfHosted: moveBack, Managed: clusters.RemoveManaged("")},
			map[string]bool{"wl": false, "mgmt": false, "boot": true, "ubuntu": false}},
	} {
		in := lifecycle.Registry.Cleanup(c.o)
		for _, r := range []run.Resource{wl, mgmt, kindCluster, template} {
			if got := in.Independent(r); got != c.want[r.Name] {
				t.Errorf("%s: %s alone = %v, want %v", c.name, r.Name, got, c.want[r.Name])
			}
		}
	}
	// Two workload clusters deleted through one management cluster go at
	// the same time; never with the management cluster itself.
	wl2 := run.Resource{Kind: clusters.ResourceKind, Name: "wl2", Attributes: map[string]string{clusters.AttrManagedBy: "/m.kubeconfig"}}
	in := lifecycle.Registry.Cleanup(suites.CleanupOptions{SelfHosted: moveBack})
	if !in.Together(wl, wl2) || in.Together(wl, mgmt) || in.Together(wl, kindCluster) {
		t.Errorf("together: wl+wl2 %v (want true), wl+mgmt %v, wl+kind %v (want false)", in.Together(wl, wl2), in.Together(wl, mgmt), in.Together(wl, kindCluster))
	}
	// The tanzu driver's clusters go through its CLI: none alone.
	in = lifecycle.Registry.ForDriver(config.DriverTanzu).Cleanup(byID)
	if in.Independent(run.Resource{Kind: tanzucli.TanzuClusterKind, Name: "wl"}) {
		t.Error("a tanzu cluster's deletion runs beside others")
	}
}

// A profile that sets a provisioner's intervals, loaded by a binary that
// does not link that provisioner, is told so, not only "unknown key".
func TestAProvisionerLeftOutIsNamedInTheIntervalProblem(t *testing.T) {
	r := suites.MustRegistry(suites.TeardownScopes, suites.LifecycleStages...)
	_, err := config.Load(config.LoadOptions{Path: "../config/local.yaml", Intervals: r.IntervalKeys(), DriverIntervals: r.DriverIntervalKeys()})
	if err == nil || !strings.Contains(err.Error(), `unknown interval key "tanzu-create"`) ||
		!strings.Contains(err.Error(), "links no provisioner for driver tanzu") {
		t.Errorf("config/local.yaml without the tanzu provisioner: %v", err)
	}
	if _, err := config.Load(config.LoadOptions{Path: "../config/local.yaml", Intervals: lifecycle.Registry.IntervalKeys(),
		DriverIntervals: lifecycle.Registry.DriverIntervalKeys()}); err != nil {
		t.Errorf("config/local.yaml with every provisioner: %v", err)
	}
}

// StagesNamed gives the stages in the order asked (harness plan's closure
// order) and names an unknown one with the registry's stages.
func TestStagesNamedKeepsTheOrderAndNamesAnUnknownStage(t *testing.T) {
	ss, err := lifecycle.Registry.StagesNamed("move", "bootstrap")
	if err != nil || len(ss) != 2 || ss[0].Name != "move" || ss[1].Name != "bootstrap" {
		t.Fatalf("StagesNamed(move, bootstrap) = %v, %v", ss, err)
	}
	if _, err := lifecycle.Registry.StagesNamed("bootstrap", "mvoe"); err == nil || !strings.Contains(err.Error(), `no stage "mvoe" in the registry (stages: ova, bootstrap,`) {
		t.Errorf("an unknown stage: %v", err)
	}
}
