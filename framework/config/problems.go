package config

import (
	"fmt"
	"sort"
	"strings"
)

// Problem is one thing wrong with a config: where, what, and how to fix it.
type Problem struct {
	File string
	Line int
	// Key is the dotted path, e.g. clusters.management.workerMachineCount.
	Key     string
	Message string
	Fix     string

	// unsetVar names the variable whose absence this problem reports, so a
	// config with a lease can defer it to the lease's user data.
	unsetVar string
}

func (p Problem) String() string {
	loc := p.File
	if p.Line > 0 {
		loc = fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	s := fmt.Sprintf("%s: %s: %s", loc, p.Key, p.Message)
	if p.Key == "" {
		s = fmt.Sprintf("%s: %s", loc, p.Message)
	}
	if p.Fix != "" {
		s += "\n      fix: " + p.Fix
	}
	return s
}

// Problems is every problem found in a config. Loading reports all of them at
// once, so a user fixes a file in one pass instead of one error per run.
type Problems []Problem

func (ps Problems) Error() string {
	sorted := append(Problems(nil), ps...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].File != sorted[j].File {
			return sorted[i].File < sorted[j].File
		}
		return sorted[i].Line < sorted[j].Line
	})
	var b strings.Builder
	noun := "problems"
	if len(sorted) == 1 {
		noun = "problem"
	}
	fmt.Fprintf(&b, "invalid harness config: %d %s (nothing was started)\n", len(sorted), noun)
	for i, p := range sorted {
		fmt.Fprintf(&b, "  %d. %s\n", i+1, p)
	}
	b.WriteString("  The config reference is in README.md, section \"Config reference\".")
	return b.String()
}
