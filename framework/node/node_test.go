package node

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/cluster-api/test/framework/clusterctl"
	"sigs.k8s.io/cluster-api/test/infrastructure/container"

	"github.com/tkg-e2e/harness/framework/run"
)

func TestValidateName(t *testing.T) {
	for name, ok := range map[string]bool{"h4e-boot": true, "": false, "-x": false, "UPPER": false, strings.Repeat("a", 41): false} {
		if err := ValidateName("Name", name); (err == nil) != ok {
			t.Errorf("ValidateName(%q) = %v, want ok=%v", name, err, ok)
		}
	}
}

func TestLoadImagesValidatesBehaviour(t *testing.T) {
	_, err := LoadImages(t.Context(), LoadImagesInput{ClusterName: "x", Timeout: 1,
		Images: []clusterctl.ContainerImage{{Name: "a", LoadBehavior: "sometimes"}}})
	if err == nil || !strings.Contains(err.Error(), `loadBehavior "sometimes" is not "mustLoad" or "tryLoad"`) {
		t.Fatalf("got %v", err)
	}
}

func fake(t *testing.T) (context.Context, *container.FakeRuntime) {
	rt, err := container.NewFakeClient()
	if err != nil {
		t.Fatal(err)
	}
	f := rt.(*container.FakeRuntime)
	// The fake keeps its call logs in package variables.
	f.ResetDeleteContainerCallLogs()
	f.ResetExecContainerCallLogs()
	return container.RuntimeInto(t.Context(), rt), f
}

func TestCallsGoThroughTheRuntimeInTheContext(t *testing.T) {
	ctx, rt := fake(t)
	if err := RemoveContainers(ctx, []Container{{Name: "h4e-mgmt-lb"}, {Name: "h4e-mgmt-cp-x"}}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(slices.Sorted(slices.Values(rt.DeleteContainerCalls())), ","); got != "h4e-mgmt-cp-x,h4e-mgmt-lb" {
		t.Fatalf("deleted %s", got)
	}
	if err := Exec(ctx, "h4e-mgmt-cp-x", nil, "journalctl", "-u", "kubelet.service"); err != nil {
		t.Fatal(err)
	}
	calls := rt.ExecContainerCalls()
	if len(calls) != 1 || calls[0].ContainerName != "h4e-mgmt-cp-x" || calls[0].Command != "journalctl" ||
		strings.Join(calls[0].Args, " ") != "-u kubelet.service" || calls[0].Config.ErrorBuffer == nil {
		t.Fatalf("exec calls %+v", calls)
	}
}

func TestRunNamesMatchWhatIsNamedAfterTheRunsClusters(t *testing.T) {
	st, err := run.New(t.TempDir(), "r", "local", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []run.Resource{{Kind: "kind-cluster", Name: "h4e-boot", State: "deleted"}, {Kind: "capi-cluster", Name: "h4e-mgmt"},
		{Kind: "vsphere-template", Name: "tmpl"}} {
		if err := st.PutResource(r); err != nil {
			t.Fatal(err)
		}
	}
	names := NamesOf(st, "kind-cluster", "capi-cluster")
	for name, want := range map[string]bool{"h4e-boot": true, "h4e-boot-control-plane": true, "h4e-mgmt-lb": true,
		"h4e-mgmtx": false, "tmpl": false, "kind": false, "": false} {
		if got := names.Match(name); got != want {
			t.Errorf("Match(%q) = %v, want %v", name, got, want)
		}
	}
}

// A run that recorded no cluster needs no docker host for its leak check.
func TestLeakCheckWithoutRunClustersAsksNothing(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
	st, err := run.New(t.TempDir(), "r", "local", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutResource(run.Resource{Kind: "vsphere-template", Name: "t", State: "ready"}); err != nil {
		t.Fatal(err)
	}
	leaks, checked, err := LeakCheck("kind-cluster", "capi-cluster")(t.Context(), st)
	if err != nil || len(leaks) != 0 || !strings.Contains(checked, "no cluster recorded") {
		t.Fatalf("leaks %v, checked %q, err %v", leaks, checked, err)
	}
	if err := st.PutResource(run.Resource{Kind: "kind-cluster", Name: "k", State: "ready"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LeakCheck("kind-cluster")(t.Context(), st); err == nil {
		t.Fatal("with a run cluster recorded, an unreachable docker host must be an error, not a clean check")
	}
}

// gatedRuntime lets every DeleteContainer call in only once want calls are
// in flight (removeAll starts them together) and fails the one named fail.
type gatedRuntime struct {
	*container.FakeRuntime
	want    int
	fail    string
	arrived chan string
	release chan struct{}
}

func (g *gatedRuntime) DeleteContainer(ctx context.Context, ref string) error {
	g.arrived <- ref
	select {
	case <-g.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	if ref == g.fail {
		return errors.New("device busy")
	}
	return nil
}

func TestRemoveAllRemovesAtTheSameTimeAndNamesEachFailure(t *testing.T) {
	g := &gatedRuntime{FakeRuntime: &container.FakeRuntime{}, want: 3, fail: "id-b",
		arrived: make(chan string, 3), release: make(chan struct{})}
	go func() {
		for range g.want {
			select {
			case <-g.arrived:
			case <-time.After(10 * time.Second):
				// Removal one at a time never gets the second call in.
				t.Error("the removals did not run at the same time")
			}
		}
		close(g.release)
	}()
	removed, err := removeAll(t.Context(), g, []removal{{ref: "id-a", name: "a", what: "a (id-a)"},
		{ref: "id-b", name: "b", what: "b (id-b)"}, {ref: "id-c", name: "c", what: "c (id-c)"}})
	if strings.Join(removed, ",") != "a,c" {
		t.Errorf("removed %v, want a,c in the input's order", removed)
	}
	if err == nil || err.Error() != "removing containers: b (id-b): device busy" {
		t.Errorf("error %v", err)
	}
}
