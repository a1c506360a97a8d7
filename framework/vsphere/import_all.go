package vsphere

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ImportOVAs imports every OVA of the input as a template, at most
// in.Concurrency at a time, and returns one Result per OVA in input order.
// An OVA that fails does not stop the others; the error lists every failure.
// Bad input fails before anything starts. Each OVA is made local (a URL's
// download checked against its sha256), inspected and its vApp properties
// compared with the expected ones before vCenter is asked anything: the
// placement is resolved (once) by the first OVA that passed those checks.
// A local OVA is then read once: hashed if a template of its name exists,
// otherwise hashed and verified while it uploads.
func (s *Session) ImportOVAs(ctx context.Context, in ImportInput) ([]Result, error) {
	if err := in.validate(); err != nil {
		return nil, err
	}
	if in.RunID == "" {
		in.RunID = "adhoc-" + randomSuffix()
	}
	dl := in.Downloads
	if dl == nil {
		dl = &Downloads{Parent: in.DownloadDir, MaxSize: in.MaxDownloadSize}
		defer func() { _ = dl.Close() }()
	}
	resolve := sync.OnceValues(func() (*Target, error) { return s.Resolve(ctx, in.Placement) })
	workers := max(in.Concurrency, 1)
	out := &lineWriter{w: in.Progress}
	results := make([]Result, len(in.OVAs))
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for i, o := range in.OVAs {
		// Take the slot before starting the goroutine, so OVAs start in the
		// order the config lists them.
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			results[i] = Result{Name: o.TemplateName(), Source: displaySource(o.Source), Action: Failed, Err: ctx.Err(), Error: ctx.Err().Error()}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			rep := &reporter{out: out, prefix: in.Prefix, name: o.TemplateName(), every: in.ProgressEvery}
			imp := &ovaImport{s: s, resolve: resolve, dl: dl, in: &in, ova: o, rep: rep}
			results[i] = imp.run(ctx)
		}()
	}
	wg.Wait()
	var errs []error
	for _, r := range results {
		if r.Err != nil {
			errs = append(errs, &OVAError{Name: r.Name, Source: r.Source, Err: r.Err})
		}
	}
	if len(errs) > 0 {
		return results, fmt.Errorf("%d of %d OVAs failed to import:\n%w", len(errs), len(results), errors.Join(errs...))
	}
	return results, nil
}

// OVAError is the failure of one OVA of a batch.
type OVAError struct {
	Name, Source string
	Err          error
}

func (e *OVAError) Error() string {
	return fmt.Sprintf("template %q from %s: %v", e.Name, e.Source, e.Err)
}
func (e *OVAError) Unwrap() error { return e.Err }
