package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tkg-e2e/harness/framework/infrastructure"
)

// Values of cleanup.selfHosted.
const (
	// SelfHostedMoveBack moves a self-hosted management cluster back into a
	// throw-away kind cluster and deletes it there through Cluster API, as
	// `tanzu management-cluster delete` does. It works on every provider.
	SelfHostedMoveBack = "moveBack"
	// SelfHostedRemoveContainers removes the run's recorded node and load
	// balancer containers by ID: seconds instead of minutes, but only for
	// CAPD, whose nodes are containers (on vSphere every VM would stay).
	SelfHostedRemoveContainers = "removeContainers"
)

// Values of cleanup.managed.
const (
	// ManagedDelete deletes a cluster a management cluster manages (the
	// workload cluster) through that management cluster, a Cluster API
	// delete, as `tanzu cluster delete` does. It works on every provider.
	ManagedDelete = "delete"
	// ManagedRemoveContainers removes the run's recorded node and load
	// balancer containers by ID, as for SelfHostedRemoveContainers.
	ManagedRemoveContainers = "removeContainers"
)

func (c *Cleanup) defaults() {
	if c.SelfHosted == "" {
		c.SelfHosted = SelfHostedMoveBack
	}
	if c.Managed == "" {
		c.Managed = ManagedDelete
	}
}

// RemovesManagedContainers reports whether a cluster a management cluster
// manages is deleted by removing the run's containers (cleanup.managed:
// removeContainers) rather than through the management cluster.
func (c *Config) RemovesManagedContainers() bool {
	return c.Cleanup.Managed == ManagedRemoveContainers
}

// RemovesSelfHostedContainers reports whether a self-hosted management
// cluster is deleted by removing the run's containers (cleanup.selfHosted:
// removeContainers) rather than moved back.
func (c *Config) RemovesSelfHostedContainers() bool {
	return c.Cleanup.SelfHosted == SelfHostedRemoveContainers
}

// RemovesStageSelfHostedContainers is RemovesSelfHostedContainers for a
// self-hosted management cluster a day-two stage made for itself
// (cleanup.stageSelfHosted, which follows cleanup.selfHosted when unset).
func (c *Config) RemovesStageSelfHostedContainers() bool {
	if c.Cleanup.StageSelfHosted == "" {
		return c.RemovesSelfHostedContainers()
	}
	return c.Cleanup.StageSelfHosted == SelfHostedRemoveContainers
}

func (c *Config) validateCleanup(add func(key, msg, fix string)) {
	for _, k := range []struct {
		key, value, safe, remove, env string
		// then is what the safe value does, said after choosing it;
		// def is the same as the default's description.
		then, def string
	}{
		{"cleanup.selfHosted", c.Cleanup.SelfHosted, SelfHostedMoveBack, SelfHostedRemoveContainers, "CLEANUP_SELF_HOSTED",
			"the management cluster is then moved back into a throw-away kind cluster and deleted there, on every provider",
			"move it back into a throw-away kind cluster and delete it there"},
		{"cleanup.managed", c.Cleanup.Managed, ManagedDelete, ManagedRemoveContainers, "CLEANUP_MANAGED",
			"the workload cluster is then deleted through its management cluster, on every provider",
			"a Cluster API delete through its management cluster"},
	} {
		switch k.value {
		case k.safe:
		case k.remove:
			c.onlyDocker(add, k.key, fmt.Sprintf("set %s: %s, or leave it unset (config/local.yaml reads %s=%s): %s", k.key, k.safe, k.env, k.safe, k.then))
		default:
			add(k.key, fmt.Sprintf("unknown value %q", k.value),
				fmt.Sprintf("use %s (the default: %s; every provider) or %s ", k.safe, k.def, k.remove)+
					"(remove the run's recorded containers by ID; infrastructure provider docker only)")
		}
	}
	// Unset follows cleanup.selfHosted, which the loop above has checked.
	switch v := c.Cleanup.StageSelfHosted; v {
	case "", SelfHostedMoveBack:
	case SelfHostedRemoveContainers:
		c.onlyDocker(add, "cleanup.stageSelfHosted", "set cleanup.stageSelfHosted: "+SelfHostedMoveBack+
			", or leave it unset to follow cleanup.selfHosted: a day-two stage's self-hosted management cluster is then moved back into a throw-away kind cluster and deleted there, on every provider")
	default:
		add("cleanup.stageSelfHosted", fmt.Sprintf("unknown value %q", v),
			fmt.Sprintf("leave it unset (it follows cleanup.selfHosted), or use %s (every provider) or %s (remove the run's recorded containers by ID; infrastructure provider docker only)",
				SelfHostedMoveBack, SelfHostedRemoveContainers))
	}
}

// onlyDocker reports key when an infrastructure provider other than docker
// is configured: removing containers deletes nothing of another provider's
// machines.
func (c *Config) onlyDocker(add func(key, msg, fix string), key, fix string) {
	var others []string
	for _, p := range c.Clusterctl.InfrastructureProviders {
		if i := infrastructure.Parse(p); !i.NodesAreContainers() && !slices.Contains(others, i.Name()) {
			others = append(others, i.Name())
		}
	}
	// No provider at all is reported on clusterctl.infrastructureProviders.
	if len(others) > 0 {
		add(key, fmt.Sprintf("removeContainers removes the run's node containers, which only CAPD (infrastructure provider docker) makes; "+
			"clusterctl.infrastructureProviders lists %s, whose machines it would leave running", strings.Join(others, ", ")), fix)
	}
}
