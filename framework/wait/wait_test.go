package wait

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestForSucceedsAfterRetries(t *testing.T) {
	n := 0
	err := For(context.Background(), Options{What: "three polls", Timeout: 5 * time.Second, Interval: time.Millisecond},
		func(context.Context) (bool, string, error) {
			n++
			return n == 3, "poll", nil
		})
	if err != nil || n != 3 {
		t.Fatalf("err=%v n=%d, want nil and 3", err, n)
	}
}

func TestForTimeoutCarriesLastStateAndError(t *testing.T) {
	var out bytes.Buffer
	calls := 0
	err := For(context.Background(), Options{What: "nodes Ready", Timeout: 80 * time.Millisecond, Interval: 5 * time.Millisecond,
		Progress: &out, ProgressEvery: 20 * time.Millisecond, Prefix: "[management]"},
		func(context.Context) (bool, string, error) {
			calls++
			if calls%2 == 0 {
				return false, "", errors.New("connection refused")
			}
			return false, "1/2 Ready", nil
		})
	var te *TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("want TimeoutError, got %v", err)
	}
	for _, want := range []string{"nodes Ready", "1/2 Ready"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if !strings.Contains(out.String(), "[management] +") || !strings.Contains(out.String(), "waiting for nodes Ready") {
		t.Errorf("progress output missing prefix or subject:\n%s", out.String())
	}
}

func TestForPermanentErrorStopsAtOnce(t *testing.T) {
	calls := 0
	err := For(context.Background(), Options{What: "x", Timeout: time.Minute, Interval: time.Millisecond},
		func(context.Context) (bool, string, error) {
			calls++
			return false, "", Permanent(errors.New("cluster deleted"))
		})
	if err == nil || calls != 1 || !strings.Contains(err.Error(), "cluster deleted") {
		t.Fatalf("err=%v calls=%d", err, calls)
	}
}

func TestForRequiresWhatAndTimeout(t *testing.T) {
	if err := For(context.Background(), Options{Timeout: time.Second}, nil); err == nil {
		t.Error("missing What accepted")
	}
	if err := For(context.Background(), Options{What: "x"}, nil); err == nil || !strings.Contains(err.Error(), "config intervals") {
		t.Errorf("missing Timeout: %v", err)
	}
}

func TestForInterruptedSaysSo(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	err := For(ctx, Options{What: "y", Timeout: time.Minute, Interval: 5 * time.Millisecond},
		func(context.Context) (bool, string, error) { return false, "pending", nil })
	if err == nil || !strings.Contains(err.Error(), "interrupted") || !strings.Contains(err.Error(), "pending") {
		t.Fatalf("got %v", err)
	}
}

func TestTimeoutsMissingNamesEachField(t *testing.T) {
	got := Timeouts{"Apply": time.Second, "NodesReady": 0, "Init": -1}.Missing("Timeouts.")
	want := "Timeouts.Init must be > 0 (set it from the config intervals); Timeouts.NodesReady must be > 0 (set it from the config intervals)"
	if err := Invalid("x.Y", got); err == nil || err.Error() != "x.Y: invalid input: "+want {
		t.Fatalf("got %v", err)
	}
	if Invalid("x.Y", nil) != nil {
		t.Fatal("no errors must be no error")
	}
}

func TestForGivesUpOnAStuckStateAfterItsGrace(t *testing.T) {
	start := time.Now()
	err := For(context.Background(), Options{What: "web Ready", Timeout: time.Minute, Interval: 5 * time.Millisecond, Grace: 60 * time.Millisecond},
		func(context.Context) (bool, string, error) {
			return false, "0/1 ready", Stuck(`pod web-1 ErrImageNeverPull: image "x:1" is not on node n1`)
		})
	var se *StuckError
	if !errors.As(err, &se) {
		t.Fatalf("want a StuckError, got %v", err)
	}
	if took := time.Since(start); took < 60*time.Millisecond || took > 5*time.Second {
		t.Errorf("gave up after %s, want the grace (60ms), not the timeout", took)
	}
	if !strings.HasPrefix(err.Error(), "pod web-1 ErrImageNeverPull") || !strings.Contains(err.Error(), "web Ready") {
		t.Errorf("the error must start with the cause and name the wait: %q", err)
	}
}

func TestForKeepsWaitingWhenAStuckStateChanges(t *testing.T) {
	calls := 0
	err := For(context.Background(), Options{What: "x", Timeout: 5 * time.Second, Interval: 10 * time.Millisecond, Grace: 50 * time.Millisecond},
		func(context.Context) (bool, string, error) {
			calls++
			switch {
			case calls >= 20:
				return true, "done", nil
			case calls%3 == 0: // healing in between resets the grace
				return false, "pulling", nil
			}
			return false, "backoff", Stuck("ImagePullBackOff")
		})
	if err != nil {
		t.Fatalf("a state that keeps changing must not end the wait: %v", err)
	}
}

func TestForTimeoutWithinTheGraceStillGivesTheCause(t *testing.T) {
	err := For(context.Background(), Options{What: "x", Timeout: 40 * time.Millisecond, Interval: 5 * time.Millisecond, Grace: time.Minute},
		func(context.Context) (bool, string, error) { return false, "s", Stuck("refused by webhook w") })
	var se *StuckError
	if !errors.As(err, &se) || !strings.HasPrefix(err.Error(), "refused by webhook w") {
		t.Fatalf("want the cause first, got %v", err)
	}
}
