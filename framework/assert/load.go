package assert

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/tkg-e2e/harness/framework/strictjson"
)

// Load reads the file at path and parses it; what names the kind of file in
// the error when it cannot be read ("placement matrix").
func Load[T any](path, what string, parse func(data []byte, source string) (T, error)) (T, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var zero T
		return zero, fmt.Errorf("%s: %w", what, err)
	}
	return parse(data, path)
}

// Parse decodes YAML strictly (strictjson.DecodeYAML: unknown and duplicate
// keys are errors) into the file's shape S, then lets build validate it and
// turn it into T. build reports problems to p instead of stopping at the
// first, so a file with three mistakes is fixed in one round; Parse fails
// when any was reported. source names the file in every message.
func Parse[S, T any](data []byte, source string, build func(shape *S, p *Problems) T) (T, error) {
	var shape S
	var zero T
	if err := strictjson.DecodeYAML(data, &shape, source); err != nil {
		return zero, err
	}
	p := &Problems{}
	t := build(&shape, p)
	if err := p.Err(); err != nil {
		return zero, err
	}
	return t, nil
}

// Problems collects the problems of one file, each prefixed with where it is
// ("matrix.yaml: components[3] (coredns)").
type Problems struct{ errs []error }

// Add records a problem at a place.
func (p *Problems) Add(at, format string, args ...any) {
	p.errs = append(p.errs, fmt.Errorf(at+": "+format, args...))
}

// Record records err when it is not nil, and says whether it did.
func (p *Problems) Record(err error) bool {
	if err != nil {
		p.errs = append(p.errs, err)
	}
	return err != nil
}

// Decode decodes one raw section strictly into v (strictjson.Decode) and
// says whether it succeeded; a failure is recorded.
func (p *Problems) Decode(raw json.RawMessage, v any, at string) bool {
	return !p.Record(strictjson.Decode(raw, v, at))
}

// Role records a problem when role is not in the Roles registry.
func (p *Problems) Role(at, role string) bool {
	if err := CheckRole(role); err != nil {
		p.Add(at, "%v", err)
		return false
	}
	return true
}

// Err joins every recorded problem, or is nil.
func (p *Problems) Err() error { return errors.Join(p.errs...) }
