package strictjson

import (
	"encoding/json"
	"strings"
	"testing"
)

type shape struct {
	Name    string            `json:"name"`
	Roles   []string          `json:"roles"`
	Section json.RawMessage   `json:"section"`
	Rows    []json.RawMessage `json:"rows"`
}

func TestDecodeYAMLReportsEveryUnknownKeyWithItsLine(t *testing.T) {
	var v shape
	err := DecodeYAML([]byte("name: a\nrole: x\nsection: {anything: 1}\nrows:\n- {free: form}\nnmae: b\n"), &v, "f.yaml")
	if err == nil {
		t.Fatal("unknown keys accepted")
	}
	for _, want := range []string{`f.yaml: unknown key "role" (did you mean "roles"?) (line 2;`, `f.yaml: unknown key "nmae" (did you mean "name"?) (line 6;`,
		"rename it to one of: name, roles, rows, section"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "anything") || strings.Contains(err.Error(), "free") {
		t.Errorf("raw sections are the caller's to decode, got %q", err)
	}
}

func TestDecodeYAMLRejectsDuplicateKeysAndWrongShapes(t *testing.T) {
	var v shape
	if err := DecodeYAML([]byte("name: a\nname: b\n"), &v, "f.yaml"); err == nil || !strings.Contains(err.Error(), "f.yaml: not valid YAML") {
		t.Errorf("duplicate key: got %v", err)
	}
	if err := DecodeYAML([]byte("roles: {a: b}\n"), &v, "f.yaml"); err == nil || !strings.Contains(err.Error(), "f.yaml: roles: expected a list, found a mapping (line 1;") {
		t.Errorf("wrong shape: got %v", err)
	}
	if err := DecodeYAML([]byte("name: a\nroles: [x]\nsection: {k: 1}\n"), &v, "f.yaml"); err != nil || v.Name != "a" || string(v.Section) != `{"k":1}` {
		t.Errorf("valid file: got %v, %+v", err, v)
	}
}

func TestSuggest(t *testing.T) {
	known := []string{"workerMachineCount", "controlPlaneMachineCount", "name"}
	for key, want := range map[string]string{"workerCount": ` (did you mean "workerMachineCount"?)`, "Nmae": ` (did you mean "name"?)`, "zzzzzzzz": ""} {
		if got := Suggest(key, known); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", key, got, want)
		}
	}
}
