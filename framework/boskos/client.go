package boskos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// States a resource moves through. Boskos accepts any string; these are the
// ones its janitors and reapers use.
const (
	Free  = "free"
	Busy  = "busy"
	Dirty = "dirty"
)

// Resource is one Boskos resource as the server returns it.
type Resource struct {
	Type       string            `json:"type"`
	Name       string            `json:"name"`
	State      string            `json:"state"`
	Owner      string            `json:"owner"`
	LastUpdate time.Time         `json:"lastupdate"`
	UserData   map[string]string `json:"userdata"`
}

// Metric counts the resources of a type by state and by owner.
type Metric struct {
	Type    string         `json:"type"`
	Current map[string]int `json:"current"`
	Owners  map[string]int `json:"owner"`
}

// Client calls one Boskos server.
type Client struct {
	// URL is the server's base URL, e.g. http://boskos.test-pods.svc.cluster.local.
	URL string
	// HTTP defaults to a client with a 30s timeout per request.
	HTTP *http.Client
}

// APIError is an answer other than 200. Status says what happened; the
// server's text is kept for the message.
type APIError struct {
	Op     string
	Status int
	Body   string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("boskos %s: HTTP %d: %s", e.Op, e.Status, strings.TrimSpace(e.Body))
}

// UnreachableError is a request that got no HTTP answer at all.
type UnreachableError struct {
	URL string
	Err error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("boskos at %s is unreachable: %v", e.URL, e.Err)
}
func (e *UnreachableError) Unwrap() error { return e.Err }

// IsNoneFree reports whether an acquire found no resource of the type in the
// wanted state (Boskos: 404 "no available resource").
func IsNoneFree(err error) bool {
	var a *APIError
	return errors.As(err, &a) && a.Status == http.StatusNotFound && strings.Contains(a.Body, "no available resource")
}

// IsUnknownType reports whether the server has no resource of that type at all.
func IsUnknownType(err error) bool {
	var a *APIError
	return errors.As(err, &a) && a.Status == http.StatusNotFound && strings.Contains(a.Body, "does not exist")
}

// IsLost reports whether an update or release was refused because the
// resource is no longer the caller's: another owner (401), another state
// (409: a reaper reset it), or gone (404).
func IsLost(err error) bool {
	var a *APIError
	return errors.As(err, &a) && (a.Status == http.StatusUnauthorized || a.Status == http.StatusConflict || a.Status == http.StatusNotFound)
}

// Acquire takes one resource of type rtype in state from to dest for owner.
// requestID keeps the caller's place in Boskos's queue between polls.
func (c *Client) Acquire(ctx context.Context, rtype, from, dest, owner, requestID string) (*Resource, error) {
	q := url.Values{"type": {rtype}, "state": {from}, "dest": {dest}, "owner": {owner}}
	if requestID != "" {
		q.Set("request_id", requestID)
	}
	body, err := c.do(ctx, http.MethodPost, "acquire", q, nil)
	if err != nil {
		return nil, err
	}
	var r Resource
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("boskos acquire: cannot read the answer %q: %w", truncate(string(body)), err)
	}
	if r.Name == "" {
		return nil, fmt.Errorf("boskos acquire: the answer names no resource: %q", truncate(string(body)))
	}
	return &r, nil
}

// Update heartbeats a resource the owner holds in state, merging userData
// into the resource's user data (an empty value deletes the key).
func (c *Client) Update(ctx context.Context, name, owner, state string, userData map[string]string) error {
	var payload []byte
	if len(userData) > 0 {
		var err error
		if payload, err = json.Marshal(userData); err != nil {
			return err
		}
	}
	_, err := c.do(ctx, http.MethodPost, "update", url.Values{"name": {name}, "owner": {owner}, "state": {state}}, payload)
	return err
}

// Release gives the resource back in state dest (Free or Dirty).
func (c *Client) Release(ctx context.Context, name, owner, dest string) error {
	_, err := c.do(ctx, http.MethodPost, "release", url.Values{"name": {name}, "owner": {owner}, "dest": {dest}}, nil)
	return err
}

// Metric counts the resources of rtype.
func (c *Client) Metric(ctx context.Context, rtype string) (Metric, error) {
	var m Metric
	body, err := c.do(ctx, http.MethodGet, "metric", url.Values{"type": {rtype}}, nil)
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return m, fmt.Errorf("boskos metric: cannot read the answer %q: %w", truncate(string(body)), err)
	}
	return m, nil
}

func (c *Client) do(ctx context.Context, method, op string, q url.Values, payload []byte) ([]byte, error) {
	base, err := url.Parse(strings.TrimRight(c.URL, "/") + "/" + op)
	if err != nil {
		return nil, fmt.Errorf("boskos URL %q: %w", c.URL, err)
	}
	base.RawQuery = q.Encode()
	var rd io.Reader
	if payload != nil {
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, base.String(), rd)
	if err != nil {
		return nil, err
	}
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &UnreachableError{URL: c.URL, Err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, &UnreachableError{URL: c.URL, Err: err}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &APIError{Op: op, Status: resp.StatusCode, Body: truncate(string(body))}
	}
	return body, nil
}

func truncate(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
