package conformance

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestJoinNetworkReal: a container like kubetest's (the image, a file of the
// run's work folder mounted) started on docker's default network is
// connected to another network once it appears; a container of the same
// image without the mount is left alone. Needs HARNESS_TEST_DOCKER=1 and
// busybox:1.35.0 (the kit's).
func TestJoinNetworkReal(t *testing.T) {
	if os.Getenv("HARNESS_TEST_DOCKER") != "1" {
		t.Skip("needs Docker: set HARNESS_TEST_DOCKER=1 after `. /var/cache/testbed/out/env.sh`")
	}
	const image = "busybox:1.35.0"
	docker := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("docker", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("docker %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	work := t.TempDir()
	if err := os.WriteFile(work+"/kubeconfig", []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	net := "tkg-e2e-jointest-" + time.Now().Format("150405")
	docker("network", "create", net)
	t.Cleanup(func() { _ = exec.Command("docker", "network", "rm", net).Run() })
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	joined := make(chan error, 1)
	go func() { joined <- joinNetwork(ctx, image, work, net, 200*time.Millisecond) }()
	time.Sleep(time.Second) // the joiner looks before the container exists
	other := docker("run", "-d", image, "sleep", "60")
	t.Cleanup(func() { _ = exec.Command("docker", "rm", "-f", other).Run() })
	ours := docker("run", "-d", "-v", work+"/kubeconfig:/tmp/kubeconfig", image, "sleep", "60")
	t.Cleanup(func() { _ = exec.Command("docker", "rm", "-f", ours).Run() })
	if err := <-joined; err != nil {
		t.Fatalf("joinNetwork: %v", err)
	}
	nets := func(id string) string {
		return docker("inspect", "-f", "{{range $k, $v := .NetworkSettings.Networks}}{{$k}} {{end}}", id)
	}
	if !strings.Contains(nets(ours), net) {
		t.Errorf("the run's container is on %q, want %s too", nets(ours), net)
	}
	if strings.Contains(nets(other), net) {
		t.Errorf("another container of the image was connected too: %q", nets(other))
	}
}
