package wait

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Interval is a wait's bound and poll period, one per wait (config.Interval
// is this type). A Poll of 0 lets For choose (Timeout/60, bounded).
type Interval struct {
	Timeout time.Duration
	Poll    time.Duration
	// Grace is how long a state that cannot fix itself (a wait.Stuck
	// condition) may last before the wait gives up with it as the cause;
	// config fills it from the stuck-grace interval. 0 is DefaultGrace.
	Grace time.Duration
}

// Timeouts names the timeouts of an input, one per wait, so that
// validation can say which one is missing rather than "timeouts must be set".
type Timeouts map[string]time.Duration

// Missing says, in name order, which timeouts are not > 0, each as
// prefix+name.
func (t Timeouts) Missing(prefix string) []string {
	var errs []string
	for name, d := range t {
		if d <= 0 {
			errs = append(errs, fmt.Sprintf("%s%s must be > 0 (set it from the config intervals)", prefix, name))
		}
	}
	sort.Strings(errs)
	return errs
}

// Invalid is the error of an input validation that found errs (nil when
// errs is empty): "<fn>: invalid input: <errs>".
func Invalid(fn string, errs []string) error {
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%s: invalid input: %s", fn, strings.Join(errs, "; "))
}
