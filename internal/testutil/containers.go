package testutil

import (
	"testing"

	"sigs.k8s.io/cluster-api/test/infrastructure/container"
)

// FakeContainers is Cluster API's fake container runtime with its delete
// log empty, for tests that check which containers a cleanup removed.
func FakeContainers(t testing.TB) (container.Runtime, *container.FakeRuntime) {
	t.Helper()
	rt, err := container.NewFakeClient()
	if err != nil {
		t.Fatal(err)
	}
	fake := rt.(*container.FakeRuntime)
	fake.ResetDeleteContainerCallLogs()
	return rt, fake
}
