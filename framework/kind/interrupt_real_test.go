package kind_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tkg-e2e/harness/framework/cleanup"
	"github.com/tkg-e2e/harness/framework/clusters"
	"github.com/tkg-e2e/harness/framework/kind"
	"github.com/tkg-e2e/harness/framework/node"
	"github.com/tkg-e2e/harness/framework/run"
	"github.com/tkg-e2e/harness/framework/wait"
)

// TestCreateKindClusterInterruptedReal cancels a kind create midway and checks
// that the call returns promptly, that the cluster was recorded in the run
// state before anything was created, and that cleanup plus the leak check
// leave nothing behind. Needs HARNESS_TEST_DOCKER=1 and KIND_NODE_IMAGE.
func TestCreateInterruptedReal(t *testing.T) {
	if os.Getenv("HARNESS_TEST_DOCKER") != "1" || os.Getenv("KIND_NODE_IMAGE") == "" {
		t.Skip("needs Docker and a node image: set HARNESS_TEST_DOCKER=1 after `. /var/cache/testbed/out/env.sh`")
	}
	dir := t.TempDir()
	st, err := run.New(dir, "intr", "local", "")
	if err != nil {
		t.Fatal(err)
	}
	name := "h4eintr-" + time.Now().Format("150405")
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(6*time.Second, cancel)
	start := time.Now()
	_, err = kind.Create(ctx, kind.CreateInput{Name: name, NodeImage: os.Getenv("KIND_NODE_IMAGE"),
		KubeconfigPath: filepath.Join(dir, "kc"), MountDockerSocket: true, State: st, Timeout: 3 * time.Minute,
		NodesReady: wait.Interval{Timeout: time.Minute, Poll: time.Second}, Progress: os.Stdout, Prefix: "[interrupt]"})
	took := time.Since(start)
	t.Logf("kind.Create returned after %s: %v", took.Round(100*time.Millisecond), err)
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Errorf("want an interruption error, got %v", err)
	}
	if took > 6*time.Second+25*time.Second {
		t.Errorf("returned %s after the cancel; want promptly", took-6*time.Second)
	}
	if r, ok := st.Resource(kind.ResourceKind, name); !ok || r.State != "creating" || r.DeleteHint == "" {
		t.Errorf("run state does not record the cluster as creating with a delete hint: %+v", r)
	}
	cctx, ccancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer ccancel()
	if err := cleanup.All(cctx, cleanup.Input{State: st,
		Deleters:   map[string]cleanup.Deleter{kind.ResourceKind: kind.Deleter(time.Minute, os.Stdout, "[interrupt]")},
		LeakChecks: []cleanup.LeakCheck{node.LeakCheck(kind.ResourceKind, clusters.ResourceKind), kind.LeakCheck(kind.ResourceKind, clusters.ResourceKind)},
		Progress:   os.Stdout, Prefix: "[interrupt]"}); err != nil {
		t.Errorf("cleanup and leak check: %v", err)
	}
}
