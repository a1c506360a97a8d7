package packages

import (
	"fmt"
	"strings"

	"github.com/tkg-e2e/harness/framework/assert"
)

// templateErrors mark a reconcile that failed rendering the package: the
// templates and values are what they are, and kapp-controller's next sync
// renders them the same way. A fetch or deploy error is left out: a
// repository or a dependency that comes later heals those.
var templateErrors = []string{"ytt: Error", "Validating final data values", "helmTemplate: Error", "cue: Error", "kbld: Error: Resolving image"}

// stuck is why a failing PackageInstall cannot reconcile in the time left,
// or "": a template or values error of the generation it was given, or a
// spec kapp-controller was told not to reconcile.
func (res Result) stuck() string {
	st := res.State
	where := fmt.Sprintf("(PackageInstall %s/%s, package %s)", res.Expected.Namespace, res.Expected.Name, st.PackageRef)
	switch {
	case !res.Verdict.Failing():
		return ""
	case st.Paused || st.Canceled:
		return fmt.Sprintf("%s %s", assert.OneLine(st.Message), where)
	case st.Phase == PhaseFailed && st.ObservedGeneration == st.Generation:
		for _, marker := range templateErrors {
			if strings.Contains(st.Message, marker) {
				return fmt.Sprintf("ReconcileFailed: %s %s", assert.OneLine(st.Message), where)
			}
		}
	}
	return ""
}
