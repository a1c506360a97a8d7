package clusters_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/cluster-api/test/framework/clusterctl"

	"github.com/tkg-e2e/harness/framework/bootstrap"
	"github.com/tkg-e2e/harness/framework/cleanup"
	"github.com/tkg-e2e/harness/framework/clusters"
	"github.com/tkg-e2e/harness/framework/kind"
	"github.com/tkg-e2e/harness/framework/move"
	"github.com/tkg-e2e/harness/framework/node"
	"github.com/tkg-e2e/harness/framework/providers"
	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/framework/wait"
)

// TestLifecycleReal drives the local profile's lifecycle against real Docker:
// kind bootstrap -> management cluster (1 control plane + 1 worker) ->
// clusterctl move (self-hosted) -> delete bootstrap -> workload cluster
// (1 control plane) -> cleanup -> leak check, printing each step's duration.
//
// It needs HARNESS_TEST_DOCKER=1 and the offline kit's environment
// (. /var/cache/testbed/out/env.sh) or the same variables pointing at release
// manifests and pulled images. Run it alone: it uses about 4 GiB and both cores.
func TestLifecycleReal(t *testing.T) {
	if os.Getenv("HARNESS_TEST_DOCKER") != "1" {
		t.Skip("needs Docker and the lifecycle images: set HARNESS_TEST_DOCKER=1 after `. /var/cache/testbed/out/env.sh`")
	}
	env := map[string]string{}
	var missing []string
	for _, k := range []string{"KIND_NODE_IMAGE", "CLUSTERCTL_CONFIG", "CNI_MANIFEST", "KAPP_CONTROLLER_MANIFEST",
		"KAPP_CONTROLLER_IMAGE", "CAPI_IMAGES", "CERT_MANAGER_IMAGES"} {
		if env[k] = os.Getenv(k); env[k] == "" {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("missing environment %s: source the kit's env.sh (. /var/cache/testbed/out/env.sh)", strings.Join(missing, ", "))
	}
	k8sVersion := os.Getenv("KUBERNETES_VERSION")
	if k8sVersion == "" {
		k8sVersion = "v1.33.1"
	}

	prefix := "h4e" + randomSuffix(4)
	dir := filepath.Join(os.TempDir(), "harness-lifecycle-"+prefix)
	state, err := run.New(dir, prefix, "local", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("run %s: state %s", prefix, state.Path())
	out := &stampWriter{w: os.Stdout}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if dl, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl.Add(-3*time.Minute)) // leave time for cleanup
		defer cancel()
	}

	var images []clusterctl.ContainerImage
	for _, list := range []string{env["CAPI_IMAGES"], env["CERT_MANAGER_IMAGES"]} {
		for _, im := range strings.Fields(list) {
			images = append(images, clusterctl.ContainerImage{Name: im, LoadBehavior: clusterctl.MustLoadImage})
		}
	}
	mgmtImages := append(append([]clusterctl.ContainerImage{}, images...),
		clusterctl.ContainerImage{Name: env["KAPP_CONTROLLER_IMAGE"], LoadBehavior: clusterctl.MustLoadImage})
	provs := providers.Providers{Infrastructure: []string{"docker"}}
	const interval = 2 * time.Second
	iv := func(d time.Duration) wait.Interval { return wait.Interval{Timeout: d, Poll: interval} }

	type timing struct {
		step string
		d    time.Duration
	}
	var timings []timing
	total := time.Now()
	timed := func(step string, f func() error) {
		t.Helper()
		start := time.Now()
		err := f()
		timings = append(timings, timing{step, time.Since(start)})
		fmt.Fprintf(out, "=== step %s: %s (err=%v)\n", step, time.Since(start).Round(100*time.Millisecond), err)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}

	// Cleanup and leak check run whatever happened, with their own context so
	// an interrupted run still cleans up.
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		start := time.Now()
		in := cleanup.Input{State: state, Progress: out, Prefix: "[cleanup]",
			Deleters: map[string]cleanup.Deleter{kind.ResourceKind: kind.Deleter(2*time.Minute, out, "[cleanup]"),
				clusters.ResourceKind: clusters.Deleter(5*time.Minute, interval, out, "[cleanup]")}}
		rep, err := cleanup.Run(cctx, in)
		timings = append(timings, timing{"cleanup", time.Since(start)})
		if err != nil {
			t.Errorf("cleanup: %v", err)
		}
		if rep != nil {
			fmt.Fprintf(out, "=== cleanup: %s\n", rep)
		}
		start = time.Now()
		for _, check := range []cleanup.LeakCheck{node.LeakCheck(kind.ResourceKind, clusters.ResourceKind), kind.LeakCheck(kind.ResourceKind, clusters.ResourceKind)} {
			leaks, checked, err := check(cctx, state)
			if err != nil || len(leaks) > 0 {
				t.Errorf("leak check: %v %v (%s)", leaks, err, checked)
			} else {
				fmt.Fprintf(out, "=== leak check: no leaks (%s)\n", checked)
			}
		}
		timings = append(timings, timing{"leak-check", time.Since(start)})
		fmt.Fprintf(out, "=== timings (run %s)\n", prefix)
		for _, tm := range timings {
			fmt.Fprintf(out, "  %-34s %7.1fs\n", tm.step, tm.d.Seconds())
		}
		fmt.Fprintf(out, "  %-34s %7.1fs\n", "TOTAL", time.Since(total).Seconds())
	}()

	// 1. kind bootstrap cluster + clusterctl init.
	bootName := prefix + "-boot"
	bootKC := filepath.Join(dir, "bootstrap.kubeconfig")
	timed("bootstrap", func() error {
		res, err := bootstrap.Bootstrap(ctx, bootstrap.Input{Name: bootName, NodeImage: env["KIND_NODE_IMAGE"], KubeconfigPath: bootKC,
			Images: images, ClusterctlConfigPath: env["CLUSTERCTL_CONFIG"], Providers: provs, State: state, CreatedBy: "bootstrap",
			Timeouts: bootstrap.Timeouts{Create: iv(3 * time.Minute), NodesReady: iv(2 * time.Minute), LoadImages: iv(3 * time.Minute),
				Init: iv(5 * time.Minute), ProvidersReady: iv(5 * time.Minute)},
			Progress: out, Prefix: "[bootstrap]"})
		if res != nil {
			fmt.Fprintf(out, "=== bootstrap steps: %s\n", res)
			for _, s := range res.Steps {
				timings = append(timings, timing{"  bootstrap/" + s.Name, s.Duration})
			}
			if res.Providers != nil {
				fmt.Fprintf(out, "=== providers: %s; deployments: %s\n", strings.Join(res.Providers.Installed, ", "), strings.Join(res.Providers.Deployments, ", "))
			}
		}
		return err
	})

	ns := prefix
	createTimeouts := clusters.CreateTimeouts{Apply: iv(3 * time.Minute), APIReachable: iv(5 * time.Minute), CNI: iv(2 * time.Minute),
		ControlPlaneInitialized: iv(5 * time.Minute), MachinesRunning: iv(8 * time.Minute), NodesReady: iv(5 * time.Minute),
		ClusterAvailable: iv(5 * time.Minute)}

	// 2. management cluster, created by the bootstrap cluster.
	mgmtName := prefix + "-mgmt"
	mgmtKC := filepath.Join(dir, "management.kubeconfig")
	var mgmt *clusters.Cluster
	timed("management-provision", func() error {
		res, err := clusters.Provision(ctx, clusters.ProvisionInput{CreateInput: clusters.CreateInput{Spec: clusters.Spec{Name: mgmtName,
			Namespace: ns, KubernetesVersion: k8sVersion, Flavor: "development", InfrastructureProvider: "docker", ControlPlaneMachineCount: 1,
			WorkerMachineCount: 1}, Role: clusters.RoleManagement, ManagementKubeconfig: bootKC, ClusterctlConfigPath: env["CLUSTERCTL_CONFIG"],
			CNIManifest: env["CNI_MANIFEST"], KubeconfigPath: mgmtKC, State: state, CreatedBy: "management", Progress: out, Prefix: "[management]"},
			Images: mgmtImages, Providers: provs, KappControllerManifest: env["KAPP_CONTROLLER_MANIFEST"],
			Timeouts: clusters.ProvisionTimeouts{CreateTimeouts: createTimeouts, LoadImages: iv(3 * time.Minute), ProvidersInit: iv(5 * time.Minute),
				ProvidersReady: iv(5 * time.Minute), KappControllerApply: iv(2 * time.Minute), KappControllerAvailable: iv(3 * time.Minute),
				KappControllerAPIService: iv(3 * time.Minute)}})
		if res != nil {
			mgmt = res.Cluster
			for _, s := range res.Steps {
				timings = append(timings, timing{"  management/" + s.Name, s.Duration})
			}
		}
		return err
	})

	// 3. move: bootstrap -> management (self-hosted), then the kind cluster goes.
	timed("move", func() error {
		res, err := move.Move(ctx, move.Input{FromKubeconfig: bootKC, ToKubeconfig: mgmtKC, Namespace: ns, ClusterName: mgmtName,
			ClusterctlConfigPath: env["CLUSTERCTL_CONFIG"], State: state,
			Timeouts: move.Timeouts{PreCheck: iv(2 * time.Minute), SettleBefore: iv(5 * time.Second), Discovery: iv(2 * time.Minute),
				Move: iv(5 * time.Minute), PostCheck: iv(2 * time.Minute), Reconcile: iv(3 * time.Minute), SettleAfter: iv(15 * time.Second)},
			Progress: out, Prefix: "[move]"})
		if res != nil {
			for _, s := range res.Steps {
				timings = append(timings, timing{"  move/" + s.Name, s.Duration})
			}
			if res.Inventory != nil {
				fmt.Fprintf(out, "=== move discovery on the source:\n%s\n", res.Inventory)
			}
			fmt.Fprintf(out, "=== move created: %s\n=== move deleted: %s\n=== target has: %s\n=== diff: %v; kept on source: %v\n",
				move.FormatCounts(res.Created), move.FormatCounts(res.Deleted), move.FormatCounts(res.Target), res.Diff, res.KeptOnSource)
			for _, m := range res.MachinesAfter {
				fmt.Fprintf(out, "=== machine after move: %s %s node=%s uid=%s providerID=%s\n", m.Name, m.Phase, m.NodeName, m.UID, m.ProviderID)
			}
			if err == nil && (res.Inventory == nil || len(res.Inventory.Objects) == 0 || len(res.Diff) > 0) {
				return fmt.Errorf("move reported success but the inventory is empty or differs: %v", res.Diff)
			}
		}
		return err
	})
	timed("management-health", func() error {
		cs, err := node.ClusterContainers(ctx, mgmtName)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "=== management containers after move: %v\n", cs)
		return mgmt.Kube.Ready(ctx)
	})
	timed("bootstrap-delete", func() error {
		return kind.Delete(ctx, kind.DeleteInput{Name: bootName, KubeconfigPath: bootKC, State: state,
			Timeout: 2 * time.Minute, Progress: out, Prefix: "[bootstrap]"})
	})

	// 4. workload cluster, created by the (now self-hosted) management cluster,
	// with the test image loaded into its node.
	var wlImages []clusterctl.ContainerImage
	if bb := os.Getenv("TEST_IMAGE_BUSYBOX"); bb != "" {
		wlImages = append(wlImages, clusterctl.ContainerImage{Name: bb, LoadBehavior: clusterctl.TryLoadImage})
	}
	timed("workload-provision", func() error {
		res, err := clusters.Provision(ctx, clusters.ProvisionInput{CreateInput: clusters.CreateInput{Spec: clusters.Spec{Name: prefix + "-wl",
			Namespace: ns, KubernetesVersion: k8sVersion, Flavor: "development", InfrastructureProvider: "docker", ControlPlaneMachineCount: 1,
			WorkerMachineCount: 0}, Role: clusters.RoleWorkload, ManagementKubeconfig: mgmtKC, ClusterctlConfigPath: env["CLUSTERCTL_CONFIG"],
			CNIManifest: env["CNI_MANIFEST"], KubeconfigPath: filepath.Join(dir, "workload.kubeconfig"), State: state, CreatedBy: "workload",
			Progress: out, Prefix: "[workload]"},
			Images: wlImages, Timeouts: clusters.ProvisionTimeouts{CreateTimeouts: createTimeouts, LoadImages: iv(3 * time.Minute)}})
		if res != nil {
			for _, s := range res.Steps {
				timings = append(timings, timing{"  workload/" + s.Name, s.Duration})
			}
		}
		return err
	})
}

func randomSuffix(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// stampWriter prefixes each line with the wall-clock time.
type stampWriter struct {
	mu  sync.Mutex
	w   io.Writer
	buf bytes.Buffer
}

func (s *stampWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Write(p)
	for {
		line, err := s.buf.ReadString('\n')
		if err != nil {
			s.buf.Reset()
			s.buf.WriteString(line)
			return len(p), nil
		}
		fmt.Fprintf(s.w, "%s %s", time.Now().Format("15:04:05"), line)
	}
}
