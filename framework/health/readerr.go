package health

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/tkg-e2e/harness/framework/assert"
)

// readError sorts a failed list call. One that polling cannot fix
// (forbidden, wrong credentials, an API the server does not serve) becomes
// an error row, so the report still shows the other sections and the
// failure names the cause; anything else (a timeout, a restarting API
// server) is returned to be retried.
func readError(row, what string, err error) (assert.Row, error) {
	var why string
	switch {
	case apierrors.IsForbidden(err):
		why = fmt.Sprintf("listing %s is forbidden: %v; the kubeconfig's user needs list on them (the cluster's admin kubeconfig has it)", what, err)
	case apierrors.IsUnauthorized(err):
		why = fmt.Sprintf("listing %s: the API server rejected the kubeconfig's credentials: %v; fetch a current kubeconfig of the cluster", what, err)
	case meta.IsNoMatchError(err), apierrors.IsNotFound(err):
		why = fmt.Sprintf("the API server does not serve %s: %v; is this a conformant Kubernetes API server, and does the client reach the right one?", what, err)
	default:
		return assert.Row{}, fmt.Errorf("listing %s: %w", what, err)
	}
	return assert.Row{Name: row, Verdict: assert.Error, Detail: why}, nil
}
