package clusters

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestAlongsideStartsAddonsBeforeCreateEnds(t *testing.T) {
	made := &Cluster{Name: "wl"}
	addonsStarted := make(chan *Cluster, 1)
	createEnded := false
	err := alongside(t.Context(), func(ctx context.Context, running func(*Cluster)) (*Cluster, error) {
		running(made)
		select { // the rest of Create (nodes Ready, Available) waits here until the add-ons have begun
		case <-addonsStarted:
		case <-time.After(5 * time.Second):
			return made, errors.New("the add-ons did not start while Create was still waiting")
		}
		createEnded = true
		return made, nil
	}, func(ctx context.Context, c *Cluster) error {
		if createEnded {
			return errors.New("the add-ons started after Create ended")
		}
		addonsStarted <- c
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestAlongsideStopsCreateWhenTheAddonsFailAndReportsTheirError(t *testing.T) {
	err := alongside(t.Context(), func(ctx context.Context, running func(*Cluster)) (*Cluster, error) {
		running(&Cluster{Name: "mgmt"})
		<-ctx.Done() // waiting for Ready nodes, until stopped
		return &Cluster{Name: "mgmt"}, context.Cause(ctx)
	}, func(ctx context.Context, c *Cluster) error {
		return errors.New("clusterctl init: cert-manager never became available")
	})
	if err == nil || err.Error() != "clusterctl init: cert-manager never became available" {
		t.Fatalf("got %v, want the add-ons' error, not Create's cancellation", err)
	}
}

func TestAlongsideStopsTheAddonsWhenCreateFails(t *testing.T) {
	addonsSaw := make(chan error, 1)
	err := alongside(t.Context(), func(ctx context.Context, running func(*Cluster)) (*Cluster, error) {
		running(&Cluster{Name: "wl"})
		return nil, errors.New("2 nodes of wl Ready: timed out")
	}, func(ctx context.Context, c *Cluster) error {
		select {
		case <-ctx.Done():
			addonsSaw <- ctx.Err()
			return ctx.Err()
		case <-time.After(5 * time.Second):
			addonsSaw <- nil
			return nil
		}
	})
	if err == nil || err.Error() != "2 nodes of wl Ready: timed out" {
		t.Fatalf("got %v, want Create's error", err)
	}
	if got := <-addonsSaw; !errors.Is(got, context.Canceled) {
		t.Fatalf("the add-ons were not stopped when Create failed (they saw %v)", got)
	}
}

func TestAlongsideRunsTheAddonsAfterACreateThatNeverSaidRunning(t *testing.T) {
	var got *Cluster
	made := &Cluster{Name: "wl"}
	err := alongside(t.Context(), func(ctx context.Context, running func(*Cluster)) (*Cluster, error) {
		return made, nil
	}, func(ctx context.Context, c *Cluster) error {
		got = c
		return nil
	})
	if err != nil || got != made {
		t.Fatalf("err %v, add-ons given %v, want them run on the made cluster", err, got)
	}
	// A Create that failed before its Machines ran leaves nothing to add.
	ran := false
	err = alongside(t.Context(), func(ctx context.Context, running func(*Cluster)) (*Cluster, error) {
		return nil, errors.New("apply refused")
	}, func(ctx context.Context, c *Cluster) error { ran = true; return nil })
	if err == nil || ran {
		t.Fatalf("err %v, add-ons ran %v", err, ran)
	}
}
