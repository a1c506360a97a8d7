package health

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/tkg-e2e/harness/framework/assert"
)

// The API server's words (k8s.io/apiserver, webhook dispatchers and
// errors): every failure to get an answer (connection refused, TLS, x509,
// a timeout, EOF, a 404 or 5xx from the webhook's server, an unreadable
// response) is "failed calling webhook "<name>": ...", and a webhook's no
// is "admission webhook "<name>" denied the request: <its message>" (or
// "... without explanation").
var (
	failedCalling = regexp.MustCompile(`failed calling webhook "([^"]+)"`)
	deniedBy      = regexp.MustCompile(`admission webhook "([^"]+)" denied the request(?::\s*(.*)|\s+without explanation)?`)
)

// classify sorts the API's answer to the dry-run create made to probe the
// webhook named hook (mutating or not); timeout is the request's own.
func classify(hook string, mutating bool, err error, timeout time.Duration) outcome {
	if err == nil || apierrors.IsAlreadyExists(err) {
		// The name is checked after admission: taken means admitted.
		return outcome{kind: answered}
	}
	msg := assert.OneLine(err.Error())
	if m := failedCalling.FindStringSubmatch(msg); m != nil {
		if m[1] == hook {
			return outcome{kind: failed, msg: msg}
		}
		return outcome{kind: refused, msg: msg, other: m[1]}
	}
	if m := deniedBy.FindStringSubmatch(msg); m != nil && m[1] == hook {
		return outcome{kind: denied, msg: assert.Or(m[2], "without explanation")}
	}
	if mutating && apierrors.IsInvalid(err) && !strings.Contains(msg, "admission webhook") {
		// The API server validates the object after the mutating webhooks
		// (handlers/create.go: Admit, then the store's BeforeCreate), so
		// Invalid means they all allowed it: this one answered. A minimal
		// custom resource lacks required fields.
		return outcome{kind: answered, msg: msg}
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) && errors.Is(err, context.DeadlineExceeded) {
		// The API server did not answer at all: not this webhook's
		// fault as far as can be told (it would have said so).
		return outcome{kind: notProbed, warn: true, msg: fmt.Sprintf("not probed: the API server did not answer the dry-run create within %s: %s", timeout, msg)}
	}
	return outcome{kind: refused, msg: msg}
}
