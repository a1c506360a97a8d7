// Package infrastructure is where a cluster's nodes run, as a typed value
// chosen once, when the config is read: the harness asks it what differs
// (are the nodes containers on this Docker host, VMs in the run's vCenter,
// does the provider need a flavor) instead of comparing provider names.
// Comparing names is how "docker:v1.14.0", which clusterctl takes, once
// turned off image loading and node-log collection for CAPD clusters.
//
// A new infrastructure is one file: a value of Kind (or any type that
// implements Infrastructure) passed to Register from an init function.
package infrastructure

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Infrastructure is where a cluster's nodes run.
type Infrastructure interface {
	// Name is the provider's clusterctl name without a version ("docker",
	// "vsphere"), "kind" for a kind cluster, "external" for a cluster the
	// harness did not make (make verify).
	Name() string
	// Provider is the name as clusterctl takes it, with the version the
	// config gave ("docker:v1.14.0"), or Name.
	Provider() string
	// NodesAreContainers: the nodes are containers on this Docker host, so
	// images are loaded into them, node logs are read with docker exec, and
	// what is left of them can be removed by container ID.
	NodesAreContainers() bool
	// NodesInVCenter: the nodes are VMs in the run's vCenter, so node logs
	// are taken over SSH and the move is checked against the inventory.
	NodesInVCenter() bool
	// NeedsFlavor: the provider has no default cluster template, so a
	// cluster's flavor must be set (CAPD has only its ClusterClass flavor).
	NeedsFlavor() bool
}

// Kind is an Infrastructure described by its traits; the harness's own
// infrastructures are Kinds.
type Kind struct {
	ClusterctlName string
	Containers     bool
	VCenter        bool
	Flavor         bool
}

func (k Kind) Name() string             { return k.ClusterctlName }
func (k Kind) Provider() string         { return k.ClusterctlName }
func (k Kind) NodesAreContainers() bool { return k.Containers }
func (k Kind) NodesInVCenter() bool     { return k.VCenter }
func (k Kind) NeedsFlavor() bool        { return k.Flavor }

// The harness's infrastructures.
var (
	// Docker is Cluster API's Docker provider (CAPD): nodes are containers.
	Docker Infrastructure = Kind{ClusterctlName: "docker", Containers: true, Flavor: true}
	// VSphere is Cluster API's vSphere provider (CAPV): nodes are VMs.
	VSphere Infrastructure = Kind{ClusterctlName: "vsphere", VCenter: true}
	// KindCluster is a kind cluster (the bootstrap cluster): nodes are
	// containers, and no Cluster API provider made them.
	KindCluster Infrastructure = Kind{ClusterctlName: "kind", Containers: true}
	// External is a cluster given to make verify: the harness knows nothing
	// of its nodes.
	External Infrastructure = Kind{ClusterctlName: "external"}
)

var (
	mu    sync.RWMutex
	known = map[string]Infrastructure{}
)

func init() {
	for _, i := range []Infrastructure{Docker, VSphere, KindCluster, External} {
		Register(i)
	}
}

// Register makes an infrastructure known by its Name. It panics on a name
// registered twice: two meanings of one name is a programming error.
func Register(i Infrastructure) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := known[i.Name()]; dup {
		panic(fmt.Sprintf("infrastructure %q registered twice", i.Name()))
	}
	known[i.Name()] = i
}

// Known lists the registered names, sorted.
func Known() []string {
	mu.RLock()
	defer mu.RUnlock()
	names := make([]string, 0, len(known))
	for n := range known {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Parse reads a provider as clusterctl takes it ("docker",
// "docker:v1.14.0"). A name no infrastructure registered is an
// infrastructure of that name with no traits the harness acts on:
// clusterctl may still know it.
func Parse(provider string) Infrastructure {
	name, version, _ := strings.Cut(strings.TrimSpace(provider), ":")
	mu.RLock()
	i, ok := known[name]
	mu.RUnlock()
	if !ok {
		i = Kind{ClusterctlName: name}
	}
	if version == "" {
		return i
	}
	return versioned{Infrastructure: i, provider: name + ":" + version}
}

// IsKnown reports whether a registered infrastructure has the provider's name.
func IsKnown(provider string) bool {
	name, _, _ := strings.Cut(strings.TrimSpace(provider), ":")
	mu.RLock()
	defer mu.RUnlock()
	_, ok := known[name]
	return ok
}

// Same reports whether a and b are the same infrastructure, whatever
// version each was given with.
func Same(a, b Infrastructure) bool {
	return a != nil && b != nil && a.Name() == b.Name()
}

// versioned is an infrastructure pinned to a provider version.
type versioned struct {
	Infrastructure
	provider string
}

func (v versioned) Provider() string { return v.provider }
