package wait

import (
	"fmt"
	"strings"
	"time"
)

// Step is one timed step of a longer operation (bootstrap, cluster
// provisioning, move). It lives here, next to the waits, because every
// package that runs steps reports them the same way and none should import
// another just for the type.
type Step struct {
	Name     string
	Duration time.Duration
}

// Steps are timed steps in the order they ran.
type Steps []Step

// Time runs f and appends its duration under name, whether or not f failed:
// a failed step's time is part of the story.
func (s *Steps) Time(name string, f func() error) error {
	start := time.Now()
	err := f()
	s.Since(name, start)
	return err
}

// Since appends the step name as lasting from start until now.
func (s *Steps) Since(name string, start time.Time) {
	*s = append(*s, Step{Name: name, Duration: time.Since(start)})
}

func (s Steps) String() string {
	parts := make([]string, 0, len(s))
	for _, st := range s {
		parts = append(parts, fmt.Sprintf("%s %s", st.Name, st.Duration.Round(100*time.Millisecond)))
	}
	return strings.Join(parts, ", ")
}
