package stages

import (
	"slices"
	"strings"
	"testing"
)

// lifecycle mirrors the shape of the real registry (suites/registry) without
// importing it: the graph logic is what is under test here.
func lifecycle(t *testing.T) *Registry {
	t.Helper()
	r, err := NewRegistry([]Definition{
		{Name: "ova", Category: Infrastructure, Intervals: []string{"connect"}},
		{Name: "bootstrap", Category: Infrastructure, Kinds: []string{"kind-cluster"}},
		{Name: "management", Needs: []string{"bootstrap"}, Category: Provider, Kinds: []string{"capi-cluster"}},
		{Name: "move", Needs: []string{"management"}, Category: Provider},
		{Name: "workload", Needs: []string{"move"}, Category: Provider},
		{Name: "placement", Needs: []string{"workload"}, Category: Placement},
		{Name: "packages", Needs: []string{"workload"}, Category: Package},
	}, Scope{Name: "cleanup", Intervals: []string{"wait-delete"}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestClosure(t *testing.T) {
	r := lifecycle(t)
	cases := map[string][]string{
		"ova":       {"ova"},
		"move":      {"bootstrap", "management", "move"},
		"workload":  {"bootstrap", "management", "move", "workload"},
		"placement": {"bootstrap", "management", "move", "workload", "placement"},
		"bootstrap": {"bootstrap"},
	}
	for in, want := range cases {
		got, err := r.Closure(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("Closure(%s) = %v, %v; want %v", in, got, err, want)
		}
	}
	if got, _ := r.Closure("packages", "ova"); !slices.Equal(got, []string{"ova", "bootstrap", "management", "move", "workload", "packages"}) {
		t.Errorf("Closure(packages, ova) = %v", got)
	}
	if _, err := r.Closure("mgmt"); err == nil || !strings.Contains(err.Error(), "stages are: ova, bootstrap") {
		t.Errorf("unknown stage: %v", err)
	}
}

// A label filter on a stage name must select exactly the stage's closure.
func TestLabelsSelectExactlyTheClosure(t *testing.T) {
	r := lifecycle(t)
	for _, focus := range r.Names() {
		want, _ := r.Closure(focus)
		var got []string
		for _, s := range r.Names() {
			if slices.Contains(r.Labels(s), focus) {
				got = append(got, s)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("label %s selects %v, want %v", focus, got, want)
		}
	}
}

func TestRegistryLookups(t *testing.T) {
	r := lifecycle(t)
	if c, ok := r.Category("packages"); !ok || c != Package {
		t.Errorf("Category(packages) = %q, %v", c, ok)
	}
	if _, ok := r.Category("BeforeSuite"); ok {
		t.Error("a name that is not a stage has a category")
	}
	if d, ok := r.Owner("capi-cluster"); !ok || d.Name != "management" {
		t.Errorf("Owner(capi-cluster) = %v, %v", d.Name, ok)
	}
	keys := r.IntervalKeys()
	if !slices.Equal(keys["ova"], []string{"connect"}) || !slices.Equal(keys["cleanup"], []string{"wait-delete"}) {
		t.Errorf("IntervalKeys = %v", keys)
	}
	if !r.Registered("ova", "connect") || !r.Registered("cleanup", "wait-delete") || r.Registered("ova", "wait-delete") || r.Registered("nope", "connect") {
		t.Error("Registered disagrees with the definitions and scopes")
	}
}

func TestNewRegistryRejectsBadDefinitions(t *testing.T) {
	_, err := NewRegistry([]Definition{
		{Name: "move", Needs: []string{"management"}, Category: Provider},
		{Name: "management", Category: "cloud"},
		{Name: "management", Category: Provider},
		{Name: "two words", Category: Harness},
	}, Scope{Name: "default"})
	if err == nil {
		t.Fatal("bad registry accepted")
	}
	for _, want := range []string{
		`"move" needs "management", which is not registered before it`,
		`category "cloud" is not one of`,
		`stage "management" is registered twice`,
		`"two words": a name is one word`,
		`scope "default" clashes`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
