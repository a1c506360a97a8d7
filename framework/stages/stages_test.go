package stages

import (
	"slices"
	"testing"
)

func TestClosure(t *testing.T) {
	cases := map[string][]string{
		OVA:       {OVA},
		Move:      {Bootstrap, Management, Move},
		Workload:  {Bootstrap, Management, Move, Workload},
		Placement: {Bootstrap, Management, Move, Workload, Placement},
		Bootstrap: {Bootstrap},
	}
	for in, want := range cases {
		got, err := Closure(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("Closure(%s) = %v, %v; want %v", in, got, err, want)
		}
	}
	if got, _ := Closure(Packages, OVA); !slices.Equal(got, []string{OVA, Bootstrap, Management, Move, Workload, Packages}) {
		t.Errorf("Closure(packages, ova) = %v", got)
	}
	if _, err := Closure("mgmt"); err == nil {
		t.Error("unknown stage accepted")
	}
}

// A label filter on a stage name must select exactly the stage's closure.
func TestLabelsSelectExactlyTheClosure(t *testing.T) {
	for _, focus := range All {
		want, _ := Closure(focus)
		var got []string
		for _, s := range All {
			if slices.Contains(Labels(s), focus) {
				got = append(got, s)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("label %s selects %v, want %v", focus, got, want)
		}
	}
}
