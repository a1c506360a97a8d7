package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// HTTPAny passes when any of the URLs answers 200: a Service reached
// through every node's NodePort is available while one node is. The URLs
// are tried at once, so a node that is gone (its address silent until the
// poll's timeout) does not hide one that answers.
func HTTPAny(c *http.Client, urls func() []string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		us := urls()
		if len(us) == 0 {
			return errors.New("no address to probe")
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		results := make(chan error, len(us))
		for _, u := range us {
			go func() { results <- get(ctx, c, u) }()
		}
		var errs []error
		for range us {
			err := <-results
			if err == nil {
				return nil
			}
			errs = append(errs, err)
		}
		return errors.Join(errs...)
	}
}

func get(ctx context.Context, c *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d", url, resp.StatusCode)
	}
	return nil
}
