package tanzu

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tkg-e2e/harness/framework/assert/asserttest"
	"github.com/tkg-e2e/harness/framework/redact"
)

var managementPhases = []string{PhasePrepare, PhaseBootstrapCreate, PhaseBootstrapSetup, PhaseBootstrapProviders,
	PhaseBootstrapPackages, PhaseManagementCreate, PhaseManagementSetup, PhaseManagementProviders,
	PhaseManagementPackages, PhaseMovePrepare, PhaseMove, PhaseBootstrapDelete, PhaseFinish}

// checkTiling fails unless the phases tile the command: the first starts
// with it, each ends where the next starts, the last ends with it, and each
// duration is its end minus its start.
func checkTiling(t *testing.T, res *Result) {
	t.Helper()
	ps := res.Phases
	if len(ps) == 0 {
		t.Fatal("no phases")
	}
	if !ps[0].Start.Equal(res.Start) || !ps[len(ps)-1].End.Equal(res.End) {
		t.Errorf("phases span %s..%s, the command %s..%s", ps[0].Start, ps[len(ps)-1].End, res.Start, res.End)
	}
	for i, p := range ps {
		if p.Duration != p.End.Sub(p.Start) || p.Duration < 0 {
			t.Errorf("phase %s: duration %s, end-start %s", p.Name, p.Duration, p.End.Sub(p.Start))
		}
		if i > 0 && !ps[i-1].End.Equal(p.Start) {
			t.Errorf("phase %s starts at %s, %s ended at %s", p.Name, p.Start, ps[i-1].Name, ps[i-1].End)
		}
	}
}

func phase(t *testing.T, res *Result, name string) Phase {
	t.Helper()
	for _, p := range res.Phases {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no phase %s in %v", name, phaseNames(res.Phases))
	return Phase{}
}

func TestRunManagementAndWorkloadClean(t *testing.T) {
	f := newFixture(t)
	cf := f.config("tkg-mgmt-vc")
	in := f.input("clean", 1000, ManagementClusterCreateArgs(cf.Path, 9))

	var mu sync.Mutex
	var events []string
	var bootstrapSeen string
	var ended []Phase
	var progress []string
	in.Progress = func(l string) { progress = append(progress, l) }
	in.Hooks = Hooks{
		OnBootstrapKubeconfig: func(p string) {
			mu.Lock()
			defer mu.Unlock()
			// The caller attaches kind now: the file must be there, whole.
			b, err := os.ReadFile(p)
			if err != nil {
				t.Errorf("bootstrap kubeconfig announced but not readable: %v", err)
			}
			bootstrapSeen = string(b)
			events = append(events, "bootstrap:"+p)
		},
		OnManagementKubeconfig: func(p string) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, "management:"+p)
		},
		OnPhase: func(p Phase) {
			mu.Lock()
			defer mu.Unlock()
			ended = append(ended, p)
			events = append(events, "phase:"+p.Name)
		},
	}
	res, err := Run(runCtx(t), in)
	if err != nil {
		t.Fatalf("clean run failed: %v", err)
	}
	if res.ExitCode != 0 || res.Failure != nil || !res.Completed {
		t.Fatalf("exit %d, failure %v, completed %v", res.ExitCode, res.Failure, res.Completed)
	}
	if got := phaseNames(res.Phases); !slices.Equal(got, managementPhases) {
		t.Errorf("phases\n got %v\nwant %v", got, managementPhases)
	}
	if got := phaseNames(ended); !slices.Equal(got, managementPhases) {
		t.Errorf("OnPhase got %v, want every phase once, in order", got)
	}
	checkTiling(t, res)
	// Phase timing is arrival time: the stand-in replays seed 000's gaps
	// 1000 times faster, so the control plane wait (225 s in the seed)
	// shows as longer than the move (14 s).
	if cp, mv := phase(t, res, PhaseManagementCreate), phase(t, res, PhaseMove); cp.Duration <= mv.Duration || cp.Duration < 150*time.Millisecond {
		t.Errorf("management-create took %s, move %s: want the seed's proportions (225 s vs 14 s, /1000)", cp.Duration, mv.Duration)
	}
	if p := phase(t, res, PhaseManagementCreate); p.Stamp != "2023-01-10T19:50:48.605Z" || !strings.Contains(p.Marker, "Start creating management cluster...") {
		t.Errorf("management-create marker %q stamp %q", p.Marker, p.Stamp)
	}

	wantBoot := filepath.Join(f.home, ".kube-tkg", "tmp")
	if filepath.Dir(res.BootstrapKubeconfig) != wantBoot || !strings.HasPrefix(filepath.Base(res.BootstrapKubeconfig), "config_") {
		t.Errorf("bootstrap kubeconfig %q, want %s/config_*", res.BootstrapKubeconfig, wantBoot)
	}
	if bootstrapSeen != f.kcData {
		t.Errorf("the bootstrap kubeconfig read in the hook is %q, want the stand-in's %q", bootstrapSeen, f.kcData)
	}
	if want := filepath.Join(f.home, ".kube", "config"); res.ManagementKubeconfig != want {
		t.Errorf("management kubeconfig %q, want %q", res.ManagementKubeconfig, want)
	}
	// The hooks fire as the lines arrive: the bootstrap kubeconfig while
	// bootstrap-create ends, the management one at the start of
	// management-setup, i.e. before management-create is reported ended.
	wantOrder := []string{"phase:" + PhaseBootstrapCreate, "bootstrap:" + res.BootstrapKubeconfig}
	if i := slices.Index(events, wantOrder[1]); i < 0 || i > slices.Index(events, "phase:"+PhaseBootstrapSetup) {
		t.Errorf("bootstrap hook not before bootstrap-setup ended: %v", events)
	}
	if i := slices.Index(events, "management:"+res.ManagementKubeconfig); i < 0 || i > slices.Index(events, "phase:"+PhaseManagementCreate) {
		t.Errorf("management hook not fired when its line arrived: %v", events)
	}

	tr := f.transcript(in)
	asserttest.Says(t, "transcript", tr, "Bootstrapper created. Kubeconfig: "+res.BootstrapKubeconfig,
		"Management cluster created!", "Moving all Cluster API objects from bootstrap cluster to management cluster...")
	if n := strings.Count(tr, "\n"); n != len(progress) {
		t.Errorf("transcript has %d lines, Progress got %d", n, len(progress))
	}
	f.assertNothingLeft(res)

	// The workload cluster, from the management cluster just made.
	wf := f.config("tkg-vc-antrea")
	win := f.input("clean", 1000, ClusterCreateArgs(wf.Path, 9))
	win.Transcript = filepath.Join(f.artifacts, "tanzu", "workload.log")
	wres, err := Run(runCtx(t), win)
	if err != nil {
		t.Fatalf("workload create: %v", err)
	}
	want := []string{PhasePrepare, PhaseWorkloadCreate, PhaseWorkloadControlPlane, PhaseWorkloadNodes, PhaseWorkloadPackages, PhaseFinish}
	if got := phaseNames(wres.Phases); !slices.Equal(got, want) {
		t.Errorf("workload phases\n got %v\nwant %v", got, want)
	}
	checkTiling(t, wres)
	if wres.ClusterName != "tkg-vc-antrea" || !wres.Completed || wres.BootstrapKubeconfig != "" {
		t.Errorf("workload result: cluster %q completed %v bootstrap kubeconfig %q", wres.ClusterName, wres.Completed, wres.BootstrapKubeconfig)
	}

	// Cleanup goes through the CLI too; management-cluster delete finds
	// the management cluster the create recorded.
	for _, args := range [][]string{ClusterDeleteArgs("tkg-vc-antrea", "default"), ClusterDeleteArgs("tkg-vc-antrea", "tkg-e2e"), ManagementClusterDeleteArgs(), VersionArgs()} {
		din := f.input("clean", 1000, args)
		din.Transcript = filepath.Join(f.artifacts, "tanzu", args[0]+"-"+args[len(args)-1]+".log")
		dres, err := Run(runCtx(t), din)
		if err != nil || dres.ExitCode != 0 {
			t.Errorf("%s: exit %v, %v", strings.Join(args, " "), dres, err)
		}
	}
	if _, err := os.Stat(res.ManagementKubeconfig); !os.IsNotExist(err) {
		t.Errorf("management-cluster delete left %s: %v", res.ManagementKubeconfig, err)
	}
	if _, err := os.Stat(res.BootstrapKubeconfig); !os.IsNotExist(err) {
		t.Errorf("the bootstrap kubeconfig %s outlived the kind cluster the CLI deleted: %v", res.BootstrapKubeconfig, err)
	}
	asserttest.Says(t, "management-cluster delete transcript", f.transcript(RunInput{Transcript: filepath.Join(f.artifacts, "tanzu", "management-cluster---yes.log")}),
		"Management cluster 'tkg-mgmt-vc' deleted.")
}

func TestRunProviderTimeout(t *testing.T) {
	f := newFixture(t)
	in := f.input("provider-timeout", 3000, ManagementClusterCreateArgs(f.config("tkg-mgmt-vc").Path, 9))
	res, err := Run(runCtx(t), in)
	var fail *Failure
	if !errors.As(err, &fail) || fail != res.Failure {
		t.Fatalf("want the Result's *Failure as the error, got %v", err)
	}
	if fail.Kind != KindProviderTimeout || fail.ExitCode != 1 || fail.Phase != PhaseBootstrapProviders {
		t.Errorf("got kind %q exit %d phase %q, want %q, 1, %q", fail.Kind, fail.ExitCode, fail.Phase, KindProviderTimeout, PhaseBootstrapProviders)
	}
	// capv and ipam were waited for and never passed; the others passed.
	if want := []string{"provider infrastructure-ipam-in-cluster", "provider infrastructure-vsphere"}; !slices.Equal(fail.Pending, want) {
		t.Errorf("pending %v, want %v", fail.Pending, want)
	}
	quoted := strings.Join(fail.Quoted, "\n")
	asserttest.Says(t, "quoted lines", quoted, "timed out waiting for provider infrastructure-vsphere", "Failure while deploying management cluster")
	asserttest.SaysNot(t, "quoted lines", quoted, "Passed waiting on provider", "kubectl get po")
	asserttest.Says(t, "markdown", fail.Markdown(), "provider wait timeout", "phase: "+PhaseBootstrapProviders,
		"still waiting for: provider infrastructure-ipam-in-cluster, provider infrastructure-vsphere", "```\n", "timed out waiting for provider infrastructure-vsphere")
	asserttest.Says(t, "error", err.Error(), "tanzu management-cluster create", "(provider wait timeout)", "exit code 1")
	if res.BootstrapKubeconfig == "" || res.ManagementKubeconfig != "" || res.Completed {
		t.Errorf("the run got as far as kind, not the management cluster, and did not complete: %q %q %v", res.BootstrapKubeconfig, res.ManagementKubeconfig, res.Completed)
	}
	checkTiling(t, res)
	f.assertNothingLeft(res)
}

func TestRunPackageReconcileFailure(t *testing.T) {
	f := newFixture(t)
	in := f.input("pkg-reconcile-fail", 1000, ManagementClusterCreateArgs(f.config("tkg-mgmt-vc").Path, 9))
	res, err := Run(runCtx(t), in)
	if err == nil || res.Failure == nil {
		t.Fatalf("want a failure, got %v", err)
	}
	fail := res.Failure
	if fail.Kind != KindPackageReconcile || fail.Phase != PhaseBootstrapPackages {
		t.Errorf("kind %q phase %q, want %q in %q", fail.Kind, fail.Phase, KindPackageReconcile, PhaseBootstrapPackages)
	}
	if want := "kapp: Error: waiting on reconcile packageinstall/tanzu-framework (packaging.carvel.dev/v1alpha1) namespace: tkg-system: Finished unsuccessfully (Reconcile failed: Deploying: Error (see .status.usefulErrorMessage for details))"; fail.UsefulErrorMessage != want {
		t.Errorf("usefulErrorMessage\n got %q\nwant %q", fail.UsefulErrorMessage, want)
	}
	if want := []string{"PackageInstall tanzu-framework", "PackageInstall tkg-pkg"}; !slices.Equal(fail.Pending, want) {
		t.Errorf("pending %v, want %v", fail.Pending, want)
	}
	quoted := strings.Join(fail.Quoted, "\n")
	asserttest.Says(t, "quoted lines", quoted, "ReconcileFailed", "package reconciliation failed: tkg-pkg")
	asserttest.Says(t, "markdown", fail.Markdown(), "package reconcile failure", "usefulErrorMessage: kapp: Error:", "PackageInstall tanzu-framework")
	// The bootstrap cluster was announced before the failure: the caller
	// can collect it.
	if res.BootstrapKubeconfig == "" || res.ManagementKubeconfig != "" {
		t.Errorf("kubeconfigs: bootstrap %q management %q", res.BootstrapKubeconfig, res.ManagementKubeconfig)
	}
	f.assertNothingLeft(res)
}

func TestRunHangIsKilledAtTimeout(t *testing.T) {
	f := newFixture(t)
	in := f.input("hang", 1000, ManagementClusterCreateArgs(f.config("tkg-mgmt-vc").Path, 9))
	in.Timeout, in.KillGrace = 2*time.Second, 500*time.Millisecond
	start := time.Now()
	res, err := Run(runCtx(t), in)
	took := time.Since(start)
	if err == nil || res.Failure == nil {
		t.Fatalf("want a failure, got %v", err)
	}
	fail := res.Failure
	if fail.Kind != KindTimeout || fail.Timeout != in.Timeout || fail.Phase != PhaseManagementCreate {
		t.Errorf("kind %q timeout %s phase %q, want %q %s %q", fail.Kind, fail.Timeout, fail.Phase, KindTimeout, in.Timeout, PhaseManagementCreate)
	}
	// The wedged CLI ignores SIGINT: only the SIGKILL after the grace
	// period ends it.
	if res.Signal != "killed" {
		t.Errorf("ended by %q, want killed (SIGKILL after SIGINT was ignored)", res.Signal)
	}
	if took < in.Timeout+in.KillGrace || took > in.Timeout+in.KillGrace+3*time.Second {
		t.Errorf("Run took %s, want about Timeout+KillGrace = %s", took, in.Timeout+in.KillGrace)
	}
	asserttest.Says(t, "quoted lines", strings.Join(fail.Quoted, "\n"), "control plane is not available yet, retrying")
	asserttest.Says(t, "markdown", fail.Markdown(), "killed by the harness after 2s")
	// The child ignores SIGINT too (inherited): only a kill of the whole
	// group stops it.
	f.assertNothingLeft(res)
}

func TestRunInterrupted(t *testing.T) {
	f := newFixture(t)
	// Slow enough that the command is mid-run when cancelled.
	in := f.input("clean", 20, ManagementClusterCreateArgs(f.config("tkg-mgmt-vc").Path, 9))
	ctx, cancel := context.WithCancel(runCtx(t))
	var cancelled time.Time
	in.Hooks.OnBootstrapKubeconfig = func(string) {
		cancelled = time.Now()
		cancel() // Ctrl-C on the harness
	}
	res, err := Run(ctx, in)
	if err == nil || res.Failure == nil {
		t.Fatalf("want a failure, got %v", err)
	}
	if took := time.Since(cancelled); took > 2*time.Second || took >= in.KillGrace {
		t.Errorf("Run returned %s after the cancel: the CLI must stop on SIGINT, before the kill grace %s", took, in.KillGrace)
	}
	if res.Failure.Kind != KindInterrupted || res.Signal != "interrupt" || res.Completed {
		t.Errorf("kind %q signal %q completed %v, want interrupted by SIGINT", res.Failure.Kind, res.Signal, res.Completed)
	}
	// Cancelled when kind was announced; the CLI prints what it has
	// printed without a pause up to the provider wait before SIGINT lands.
	if p := res.Failure.Phase; p != PhaseBootstrapSetup && p != PhaseBootstrapProviders {
		t.Errorf("interrupted in %q, want %s or %s", p, PhaseBootstrapSetup, PhaseBootstrapProviders)
	}
	if last := res.Phases[len(res.Phases)-1].Name; last != res.Failure.Phase {
		t.Errorf("the failure names phase %q, the last phase is %q", res.Failure.Phase, last)
	}
	checkTiling(t, res)
	f.assertNothingLeft(res)
}

func TestRunEchoedPasswordIsRedacted(t *testing.T) {
	f := newFixture(t)
	cf := f.config("tkg-mgmt-vc")

	// Control: with a redactor that does not know the password, it shows.
	// Without this the test below would pass for a stand-in that never
	// echoes it.
	ctl := f.input("echo-password", 1000, ManagementClusterCreateArgs(cf.Path, 9))
	ctl.Redactor = redact.New()
	ctl.Transcript = filepath.Join(f.t.TempDir(), "control.log")
	if _, err := Run(runCtx(t), ctl); err == nil || !strings.Contains(f.transcript(ctl), testPassword) {
		t.Fatalf("control run: the stand-in did not echo the password (err %v)", err)
	}

	in := f.input("echo-password", 1000, ManagementClusterCreateArgs(cf.Path, 9))
	var progress []string
	in.Progress = func(l string) { progress = append(progress, l) }
	res, err := Run(runCtx(t), in)
	if err == nil || res.Failure == nil {
		t.Fatalf("want a failure, got %v", err)
	}
	if res.Failure.Kind != KindVCenter {
		t.Errorf("kind %q, want %q", res.Failure.Kind, KindVCenter)
	}
	js, _ := json.Marshal(res)
	tr := f.transcript(in)
	for what, text := range map[string]string{"transcript": tr, "error": err.Error(), "quoted lines": strings.Join(res.Failure.Quoted, "\n"),
		"markdown": res.Failure.Markdown(), "result": string(js), "progress": strings.Join(progress, "\n")} {
		asserttest.SaysNot(t, what, text, testPassword)
	}
	// The lines are there, masked: redaction, not a lost line.
	asserttest.Says(t, "transcript", tr, `Setting config variable "VSPHERE_PASSWORD" to value "`+redact.Mask+`"`)
	asserttest.Says(t, "quoted lines", strings.Join(res.Failure.Quoted, "\n"), "with password "+redact.Mask+": ServerFaultCode: Cannot complete login")
	f.assertNothingLeft(res)
}

func TestRunRejectsBadInput(t *testing.T) {
	_, err := Run(context.Background(), RunInput{CLI: "/nonexistent/tanzu"})
	if err == nil {
		t.Fatal("want an error")
	}
	asserttest.Says(t, "error", err.Error(), "TANZU_CLI", "Args are required", "Transcript is required", "Redactor is required", "Timeout and KillGrace must be > 0")
}

// The scenario is per command (RunInput.Env): here the management cluster
// is taken as made, and the workload's vsphere-csi add-on fails.
func TestRunWorkloadPackageReconcileFailure(t *testing.T) {
	f := newFixture(t)
	in := f.input("pkg-reconcile-fail", 1000, ClusterCreateArgs(f.config("tkg-vc-antrea").Path, 9))
	res, err := Run(runCtx(t), in)
	if err == nil || res.Failure == nil {
		t.Fatalf("want a failure, got %v", err)
	}
	fail := res.Failure
	if fail.Kind != KindPackageReconcile || fail.Phase != PhaseWorkloadPackages || res.ClusterName != "tkg-vc-antrea" {
		t.Errorf("kind %q phase %q cluster %q", fail.Kind, fail.Phase, res.ClusterName)
	}
	if want := []string{"PackageInstall tkg-vc-antrea-vsphere-csi"}; !slices.Equal(fail.Pending, want) {
		t.Errorf("pending %v, want %v (kapp-controller, antrea and cpi reconciled)", fail.Pending, want)
	}
	if !strings.HasPrefix(fail.UsefulErrorMessage, "kapp: Error: waiting on reconcile daemonset/vsphere-csi-node") {
		t.Errorf("usefulErrorMessage %q", fail.UsefulErrorMessage)
	}
	asserttest.Says(t, "error", err.Error(), "tanzu cluster create", "package reconcile failure", "still waiting for PackageInstall tkg-vc-antrea-vsphere-csi")
}

// With TANZU_STANDIN_BACKEND the stand-in runs the backend at each of its
// transcript's #!backend lines, in order, with the configuration file's
// variables, and its output marked in the CLI's; a backend that fails ends
// the command as the CLI ends one, exit 1 with an Error: line.
func TestStandinRunsBackendInOrder(t *testing.T) {
	f := newFixture(t)
	log := filepath.Join(f.work, "backend.log")
	backend := filepath.Join(f.work, "backend.sh")
	script := "#!/bin/sh\necho \"$1 $CLUSTER_NAME ${NAMESPACE:-}\" >>" + log + "\necho did $1\n[ \"$1\" != \"${FAIL_AT:-}\" ]\n"
	if err := os.WriteFile(backend, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	cf := f.config("tkg-mgmt-vc")
	in := f.input("clean", 1000, ManagementClusterCreateArgs(cf.Path, 9))
	in.Env = append(in.Env, "TANZU_STANDIN_BACKEND="+backend)
	res, err := Run(runCtx(t), in)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("management-cluster create with a backend: %v, %v", res, err)
	}
	got, _ := os.ReadFile(log)
	want := "bootstrap tkg-mgmt-vc \nproviders tkg-mgmt-vc \nmanagement tkg-mgmt-vc \nmanagement-providers tkg-mgmt-vc \n" +
		"packages tkg-mgmt-vc \nmove tkg-mgmt-vc \ndelete-bootstrap tkg-mgmt-vc \n"
	if string(got) != want {
		t.Errorf("backend calls:\n%s\nwant:\n%s", got, want)
	}
	if tr := f.transcript(in); !strings.Contains(tr, "standin-backend move: did move") {
		t.Errorf("the backend's output is not in the transcript, marked:\n%s", tr)
	}

	// tanzu cluster delete passes its namespace on.
	_ = os.Remove(log)
	din := f.input("clean", 1000, ClusterDeleteArgs("tkg-vc-antrea", "tkg-e2e"))
	din.Env = append(din.Env, "TANZU_STANDIN_BACKEND="+backend)
	if res, err := Run(runCtx(t), din); err != nil || res.ExitCode != 0 {
		t.Fatalf("cluster delete with a backend: %v, %v", res, err)
	}
	if got, _ := os.ReadFile(log); string(got) != "delete-workload tkg-vc-antrea tkg-e2e\n" {
		t.Errorf("cluster delete's backend call: %q", got)
	}

	fin := f.input("clean", 1000, ClusterCreateArgs(f.config("tkg-vc-antrea").Path, 9))
	fin.Env = append(fin.Env, "TANZU_STANDIN_BACKEND="+backend, "FAIL_AT=workload")
	fin.Transcript = filepath.Join(f.artifacts, "tanzu", "fail.log")
	res, err = Run(runCtx(t), fin)
	if err == nil || res == nil || res.ExitCode != 1 {
		t.Fatalf("a failing backend: want exit 1 and an error, got %v, %v", res, err)
	}
	if tr := f.transcript(fin); !strings.Contains(tr, "Error: unable to set up tkg-vc-antrea: standin backend workload: exit status 1") {
		t.Errorf("a failing backend's Error line is missing:\n%s", tr)
	}
}
