package vsphere_test

import (
	"context"
	"testing"
	"time"

	"github.com/vmware/govmomi/simulator/sim25"

	"github.com/tkg-e2e/harness/framework/vsphere"
)

// A long import must not lose its session to vCenter's idle timeout. The
// timeout is server-wide, so this test has its own simulator.
func TestKeepAliveOutlivesTheSessionTimeout(t *testing.T) {
	own, err := vsphere.StartSimulator()
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	ctx := context.Background()
	in := own.SessionInput()
	in.ConnectTimeout = 5 * time.Second
	admin, err := vsphere.Connect(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if err := sim25.SetSessionTimeout(ctx, admin.Vim(), 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}

	in.KeepAlive = 100 * time.Millisecond
	kept, err := vsphere.Connect(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	defer kept.Close(ctx)
	in.KeepAlive = time.Hour
	idle, err := vsphere.Connect(ctx, in)
	if err != nil {
		t.Fatal(err)
	}

	time.Sleep(time.Second)
	if s, err := kept.Client.SessionManager.UserSession(ctx); err != nil || s == nil {
		t.Errorf("session with keepalive expired: %v", err)
	}
	if s, _ := idle.Client.SessionManager.UserSession(ctx); s != nil {
		t.Errorf("session without keepalive survived; the test does not test anything")
	}
}
