// Package strictjson decodes one JSON section (a YAML file after conversion)
// and rejects keys the target type does not know, naming where and what
// would have been valid. The placement matrix and package list loaders share it.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"

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
	var keys []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			keys = append(keys, name)
		}
	}
	sort.Strings(keys)
	return keys
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
// error; plain YAML would silently keep the last one), then decodes it with Decode.
func DecodeYAML(data []byte, v any, source string) error {
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return fmt.Errorf("%s: not valid YAML: %w", source, err)
	}
	return Decode(js, v, source)
}
