// Package health is cluster health as TKG's qualification checks judge it,
// as an assert.Check: the expected nodes are all there, Ready, free of
// pressure, schedulable and at the configured Kubernetes version; every
// aggregated API is Available; and every admission webhook that calls a
// Service has a ready endpoint behind it and, with failurePolicy Fail,
// answers a server-side dry-run create of an object it matches (allowing
// or denying it). The last two are what breaks a cluster that looks fine
// by its nodes: a dead metrics-server makes namespace deletion hang on
// discovery, and a webhook with failurePolicy Fail that does not answer
// (no endpoint, a certificate the API server does not trust, a server that
// hangs) rejects every request it matches. Such a webhook's row carries its
// cause as Stuck, so the wait gives up after its grace.
//
// The dry-runs persist nothing. The one write is a scratch namespace
// (AdmissionProbeLabel) for a webhook whose namespaceSelector no existing
// namespace matches, deleted when the check ends; Check.ReadOnly forbids it.
//
// assert.Run polls the rows until none fails or the timeout from the
// caller's assert.Options passes; the failure message names every cause.
package health
