// Package rollout watches a cluster's Machines while they change: a
// Kubernetes upgrade that replaces every Machine, a MachineDeployment
// scaled up and down, a MachineHealthCheck that replaces an unhealthy one.
// It keeps every Machine's life (created, Ready, gone) as a Timeline for
// the reports, and says which Machine got stuck, with its conditions, when
// the cluster does not settle in time. Its helpers return errors, so they
// work inside and outside Ginkgo.
package rollout
