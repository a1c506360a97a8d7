// Package vsphere is the harness's vSphere library for the ova stage: a SOAP
// session to vCenter (or to an in-process vcsim), inventory lookups whose
// errors list what exists, idempotent OVA import as templates with
// client-side manifest verification, vApp property validation and an
// inventory dump for the run's artifacts.
//
// It wraps govmomi (ovf/importer, find, simulator) rather than copying it, and
// it returns errors instead of failing a test, so the Ginkgo spec, the
// benchmark and plain Go tests use the same functions. The vCenter password
// is an input only: it is never logged, never put in a URL and never part of
// an error message.
package vsphere
