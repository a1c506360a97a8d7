// Package smoke proves that a workload cluster serves workloads, the way a
// user would find out: it runs an HTTP server on every schedulable node
// (Ready, uncordoned, Linux, no NoSchedule or NoExecute taint: where an
// ordinary workload lands) behind a Service, then from a client pod on every
// client node (the same, except that NoSchedule taints are tolerated, so a
// control plane gets a client too) resolves the Service by DNS, calls it,
// and calls every server pod by its IP, so that at least one request
// crosses from one node to another. On a CAPD cluster (a control plane
// tainted NoSchedule and one worker) the server runs on the worker and the
// control plane's client reaches it across nodes.
//
// Why not only "nodes Ready, system pods Running": a cluster whose CNI does
// not route between nodes, whose kube-proxy does not program Service rules,
// or whose CoreDNS does not answer, passes those checks and still serves
// nothing. Each of those failures shows up here as a named step, a request
// that failed with the client's own error message, and the tail of its log.
//
// Everything runs in a namespace of its own (tkg-e2e-smoke-<random>,
// labelled LabelKey=LabelValue) that Run deletes before it returns, also on
// failure; DeleteLeftovers removes the ones an interrupted run left behind.
//
// Like framework/wait it returns errors and never fails a test, so it works
// inside Ginkgo specs, in scripts and in plain Go tests. The Result says what
// was proven and what was not (with clients on a single node, as on a
// one-node cluster, traffic between nodes is "not possible", not silently
// passed), and Markdown renders it as smoke.md.
package smoke
