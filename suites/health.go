package suites

import (
	"github.com/tkg-e2e/harness/framework/assert"
	"github.com/tkg-e2e/harness/framework/health"
	"github.com/tkg-e2e/harness/framework/stages"
)

// Health checks every cluster of the run as TKG's own qualification does
// ("Verifying number of nodes and k8s"): the configured node count, every
// node Ready without pressure at the kubelet version the cluster should
// have now (the configured one, or the one an upgrade took it to), every
// APIService Available, every admission webhook answering a dry-run
// request (READ_ONLY=1: without a scratch namespace for the probes).
var Health = assertionStage(stages.Definition{Name: "health", Needs: []string{"workload"}, Category: stages.Infrastructure,
	Intervals: []string{"wait-healthy"}, Doc: "node count, node Ready / pressure / kubelet version, APIServices Available, webhooks answering a dry-run create, on every cluster"},
	"has the configured nodes, all Ready at the configured version, every APIService and webhook served",
	func(e *Env) (assert.Check, error) {
		c := health.NewCheck(func(t assert.Target) (health.Expectation, bool) {
			cl, version, ok := e.expectationFor(t.Name)
			if !ok {
				return health.Expectation{}, false
			}
			return health.Expectation{ControlPlaneNodes: cl.ControlPlaneMachineCount, WorkerNodes: cl.WorkerMachineCount,
				KubernetesVersion: version}, true
		})
		c.ReadOnly = e.ReadOnly
		return c, nil
	}, nil)
