package boskos

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/tkg-e2e/harness/framework/wait"
)

// AcquireOptions say what to lease and how long to wait for it.
type AcquireOptions struct {
	Type  string
	Owner string
	// Timeout bounds the wait for a free resource; Poll is the time between tries.
	Timeout, Poll time.Duration
	// Progress gets a line while waiting (which resources are busy, whose).
	Progress io.Writer
	Prefix   string
}

// AcquireWait takes a free resource of the type, busy, for the owner,
// waiting in Boskos's queue (one request ID for every try, so a run that
// asked first is served first) until the timeout. A server that does not
// answer the first try, or that has no resource of the type at all, fails
// at once: waiting would not change either.
func AcquireWait(ctx context.Context, c *Client, o AcquireOptions) (*Resource, error) {
	if o.Type == "" || o.Owner == "" {
		return nil, errors.New("boskos.AcquireWait: Type and Owner are required")
	}
	requestID := newRequestID()
	var got *Resource
	tries := 0
	err := wait.For(ctx, wait.Options{
		What:     fmt.Sprintf("a free %s from boskos at %s", o.Type, c.URL),
		Timeout:  o.Timeout,
		Interval: o.Poll,
		Progress: o.Progress,
		Prefix:   o.Prefix,
	}, func(ctx context.Context) (bool, string, error) {
		tries++
		r, err := c.Acquire(ctx, o.Type, Free, Busy, o.Owner, requestID)
		var unreachable *UnreachableError
		switch {
		case err == nil:
			got = r
			return true, "acquired " + r.Name, nil
		case IsUnknownType(err):
			return false, "", wait.Permanent(fmt.Errorf("boskos at %s has no resource of type %q: %w", c.URL, o.Type, err))
		case errors.As(err, &unreachable) && tries == 1:
			return false, "", wait.Permanent(err)
		case IsNoneFree(err):
			return false, poolState(ctx, c, o.Type), nil
		default:
			return false, "", err
		}
	})
	if err != nil {
		return nil, err
	}
	return got, nil
}

// poolState says how busy the pool is, for the progress lines and the
// timeout error: "0 of 2 free; busy: 2 (owners: run-a, run-b)".
func poolState(ctx context.Context, c *Client, rtype string) string {
	m, err := c.Metric(ctx, rtype)
	if err != nil {
		return "none free (metric: " + err.Error() + ")"
	}
	total := 0
	var states []string
	for s, n := range m.Current {
		total += n
		if s != Free {
			states = append(states, fmt.Sprintf("%s: %d", s, n))
		}
	}
	sort.Strings(states)
	var owners []string
	for ow := range m.Owners {
		if ow != "" {
			owners = append(owners, ow)
		}
	}
	sort.Strings(owners)
	s := fmt.Sprintf("%d of %d free", m.Current[Free], total)
	if len(states) > 0 {
		s += "; " + strings.Join(states, ", ")
	}
	if len(owners) > 0 {
		s += " (owners: " + strings.Join(owners, ", ") + ")"
	}
	return s
}

func newRequestID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
