// Package scripts holds the harness's shell entry points; its Go tests run
// the shell libraries the benchmarks share, with stub sides.
package scripts

import (
	"os/exec"
	"strings"
	"testing"
)

// bench runs body after sourcing lib-bench.sh, as the bench scripts do.
func bench(t *testing.T, body string) string {
	t.Helper()
	out, err := exec.Command("bash", "-c", "set -euo pipefail; . ./lib-bench.sh\n"+body).CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	return string(out)
}

// Each side's round times reach the script's own arrays whatever they are
// called: bench-flow's by-hand side fills b, and a take_turns with a local
// b had kept them from it (its medians read 0 and its ratio 0.00).
func TestTakeTurnsFillsTheSidesArraysAndAlternatesWhoGoesFirst(t *testing.T) {
	got := bench(t, `
declare -a a b n r t order
first() { a[$1]=$((10 + $1)) n[$1]=$1 r[$1]=$1 t[$1]=$1; order+=("first$1"); }
second() { b[$1]=$((20 + $1)); order+=("second$1"); }
report() { echo "report $1 $2"; }
take_turns 3 first second
echo "${order[*]}"
times_line first "${a[@]}"
times_line second "${b[@]}"
echo "n r t: ${n[*]} ${r[*]} ${t[*]}"
`)
	for _, want := range []string{
		"report 1 first\nreport 2 second\nreport 3 first\n",
		"first1 second1 second2 first2 first3 second3\n",
		"first: 11.0s 12.0s 13.0s (median 12.0s)\n",
		"second: 21.0s 22.0s 23.0s (median 22.0s)\n",
		"n r t: 1 2 3 1 2 3 1 2 3\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

func TestMedianAndRounds(t *testing.T) {
	if got := bench(t, `median 3 1 2; median 4 1 3 2; median 7`); got != "2\n2.5\n7\n" {
		t.Errorf("medians: %q, want 2, 2.5, 7", got)
	}
	if got := bench(t, `rounds_from 3`); got != "3\n" {
		t.Errorf("rounds_from 3: %q", got)
	}
	out, err := exec.Command("bash", "-c", ". ./lib-bench.sh; rounds_from 0").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "ROUNDS=0: want a whole number of rounds >= 1") {
		t.Errorf("rounds_from 0: err %v, output %q", err, out)
	}
}
