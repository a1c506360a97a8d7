// Package health is cluster health as TKG's qualification checks judge it,
// as an assert.Check: the expected nodes are all there, Ready, free of
// pressure, schedulable and at the configured Kubernetes version; every
// aggregated API is Available; and every admission webhook that calls a
// Service has a ready endpoint behind it. The last two are what breaks a
// cluster that looks fine by its nodes: a dead metrics-server makes
// namespace deletion hang on discovery, and a webhook with failurePolicy
// Fail and no endpoint rejects every request it matches.
//
// assert.Run polls the rows until none fails or the timeout from the
// caller's assert.Options passes; the failure message names every cause.
package health
