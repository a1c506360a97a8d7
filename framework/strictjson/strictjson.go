// Package strictjson is the harness's one strict decoder of its YAML files:
// keys the target type does not know are rejected, naming where, on which
// line, and what would have been valid. The config loader (yaml tags, via
// CheckKeys) and the placement matrix and package list loaders (json tags, via
// DecodeYAML and Decode) share it.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"
)

var unknownFieldRE = regexp.MustCompile(`json: unknown field "([^"]*)"`)

// Decode decodes one JSON section into v and rejects keys v does not
// know. encoding/json only says `unknown field "x"`; a reader fixing a YAML
// file needs where (path) and what would have been valid, so the error is
// rewritten to say both.
func Decode(raw json.RawMessage, v any, path string) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if m := unknownFieldRE.FindStringSubmatch(err.Error()); m != nil {
			return fmt.Errorf("%s: unknown key %q (known keys: %s)", path, m[1], strings.Join(KnownKeys(v), ", "))
		}
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return fmt.Errorf("%s: key %q: got a %s, want %s", path, typeErr.Field, typeErr.Value, friendlyType(typeErr.Type))
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// KnownKeys lists the JSON keys of the struct v points to.
func KnownKeys(v any) []string {
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	return slices.Sorted(maps.Keys(Fields(t, "json")))
}

func friendlyType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Slice:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int32, reflect.Int64:
		return "a number"
	default:
		return "a " + t.Kind().String()
	}
}

// DecodeYAML converts a YAML document to JSON, strictly (duplicate keys are an
// error; plain YAML would silently keep the last one), reports every unknown
// key with its line (CheckKeys), then decodes it with Decode.
func DecodeYAML(data []byte, v any, source string) error {
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return fmt.Errorf("%s: not valid YAML: %w", source, err)
	}
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("%s: not valid YAML: %w", source, err)
	}
	var errs []error
	for _, p := range CheckKeys(&doc, reflect.TypeOf(v), "json") {
		where := source
		if p.In != "" {
			where += ": " + p.In
		}
		detail := fmt.Sprintf("line %d", p.Line)
		if p.Fix != "" {
			detail += "; " + p.Fix
		}
		errs = append(errs, fmt.Errorf("%s: %s (%s)", where, p.Message, detail))
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return Decode(js, v, source)
}
