// Package artifacts writes what a run leaves for the person who reads a
// failed nightly: every collector (cluster, vSphere, reports) writes through
// one Writer, so every file is redacted (registered secrets in all their
// renderings, Secret data, kubeconfig credentials, private keys) and capped in
// size the same way, and every item that could not be collected is listed in
// errors.txt instead of being lost in a log.
//
// Sub-packages: cluster (one Kubernetes cluster and its nodes), vsphere (a
// vCenter folder, its templates, tasks and events), report (SUMMARY.md,
// timings.json, index.html, junit.xml), leakcheck (the scanner the tests and
// the suite's final check use to prove no secret reached the folder) and
// artifactstest (test helpers). The data the collectors hand to the
// reports (findings.go) lives here so that reports can be written when no
// collector ran at all.
package artifacts
