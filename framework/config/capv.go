package config

import (
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/tkg-e2e/harness/framework/infrastructure"
)

// clusterctlFills are the variables clusterctl sets itself from the cluster
// spec (`clusterctl generate cluster` flags).
var clusterctlFills = []string{"CLUSTER_NAME", "NAMESPACE", "KUBERNETES_VERSION", "CONTROL_PLANE_MACHINE_COUNT", "WORKER_MACHINE_COUNT"}

// ClusterctlFills returns the variables clusterctl derives from the cluster spec.
func ClusterctlFills() []string { return slices.Clone(clusterctlFills) }

// UsesCAPV says whether the clusters are CAPV clusters.
func (c *Config) UsesCAPV() bool {
	for _, p := range c.Clusterctl.InfrastructureProviders {
		if infrastructure.Same(infrastructure.Parse(p), infrastructure.VSphere) {
			return true
		}
	}
	return false
}

// Infrastructure is where the clusters the run creates have their nodes:
// the first of clusterctl.infrastructureProviders, with its version, read
// once when the config was loaded (nil when none is listed, which
// validation reports).
func (c *Config) Infrastructure() infrastructure.Infrastructure {
	if c.infra == nil {
		return c.firstInfrastructure() // a Config built in code, not loaded
	}
	return c.infra
}

func (c *Config) firstInfrastructure() infrastructure.Infrastructure {
	if len(c.Clusterctl.InfrastructureProviders) == 0 {
		return nil
	}
	return infrastructure.Parse(c.Clusterctl.InfrastructureProviders[0])
}

// ClusterctlVariables are the variables clusterctl renders a cluster's
// template with (by cluster ID; "" for the bootstrap cluster and move): the profile's variables; with CAPV, the VSPHERE_*
// values taken from the vsphere section (one source of truth: the harness
// and CAPV talk to the same vCenter, folder and pool), VSPHERE_TEMPLATE from
// the OVA the ova stage imports for the cluster's Kubernetes version, and
// CPI_IMAGE_K8S_VERSION from that version; then the cluster's own variables.
// The result holds the vCenter password: write it only to 0600 files outside
// the artifacts.
func (c *Config) ClusterctlVariables(id string) map[string]string {
	out := maps.Clone(c.Variables)
	if out == nil {
		out = map[string]string{}
	}
	cl := c.cluster(id)
	if c.UsesCAPV() {
		v := c.VSphere
		for k, val := range map[string]string{
			"VSPHERE_SERVER": serverHost(v.Server), "VSPHERE_USERNAME": v.Username, "VSPHERE_PASSWORD": v.Password.Reveal(),
			"VSPHERE_TLS_THUMBPRINT": v.TLSThumbprint, "VSPHERE_DATACENTER": v.Datacenter, "VSPHERE_DATASTORE": v.Datastore,
			"VSPHERE_FOLDER": v.Folder, "VSPHERE_RESOURCE_POOL": v.ResourcePool, "VSPHERE_NETWORK": v.Network,
			"VSPHERE_STORAGE_POLICY": v.StoragePolicy, "VSPHERE_SSH_AUTHORIZED_KEY": v.SSHAuthorizedKey,
		} {
			out[k] = val
		}
		if cl != nil {
			if t, ok := c.TemplateFor(cl.KubernetesVersion); ok {
				out["VSPHERE_TEMPLATE"] = t
			}
			if _, set := out["CPI_IMAGE_K8S_VERSION"]; !set {
				out["CPI_IMAGE_K8S_VERSION"] = minorZero(cl.KubernetesVersion)
			}
		}
	}
	if cl != nil {
		maps.Copy(out, cl.Variables)
	}
	return out
}

// TemplateFor returns the OVA template whose KUBERNETES_SEMVER is the
// Kubernetes version (v1.33.1 matches v1.33.1+vmware.1).
func (c *Config) TemplateFor(kubernetesVersion string) (string, bool) {
	for _, o := range c.OVA.Images {
		s := o.Properties["KUBERNETES_SEMVER"]
		if s == kubernetesVersion || strings.HasPrefix(s, kubernetesVersion+"+") {
			return o.Name, true
		}
	}
	return "", false
}

// ClusterOf returns the configured Cluster API cluster of an ID
// (management, workload, workload-2, ...); false for any other.
func (c *Config) ClusterOf(id string) (WorkloadCluster, bool) {
	if cl := c.cluster(id); cl != nil {
		return *cl, true
	}
	return WorkloadCluster{}, false
}

// serverHost is what CAPV's VSPHERE_SERVER wants: host[:port], no scheme or /sdk.
func serverHost(s string) string {
	if u, err := url.Parse(s); err == nil && u.Host != "" {
		return u.Host
	}
	return s
}

// serverHostname is the host part of a server written as a host, host:port
// or an https URL; empty when there is none.
func serverHostname(s string) string {
	h := serverHost(s)
	if host, _, err := net.SplitHostPort(h); err == nil {
		return host
	}
	return h
}

func minorZero(v string) string {
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(parts) < 2 {
		return v
	}
	return fmt.Sprintf("v%s.%s.0", parts[0], parts[1])
}

// validateCAPV checks what CAPV's cluster template needs beyond the vsphere
// section (whose keys validateVSphere checks): a template imported by the ova
// stage for each cluster's version, a control-plane endpoint of its own per
// cluster, a CNI (CAPV's template ships none), no second VSPHERE_TEMPLATE.
func (c *Config) validateCAPV(add func(key, msg, fix string)) {
	switch c.Rehearsal.StopAfter {
	case "", "provisioned":
	default:
		add("rehearsal.stopAfter", fmt.Sprintf("unknown value %q", c.Rehearsal.StopAfter), "leave it empty (a real vCenter) or write provisioned")
	}
	switch c.VSphere.PowerOffMode {
	case "", "hard", "soft", "trySoft":
	default:
		add("vsphere.powerOffMode", fmt.Sprintf("unknown power-off mode %q", c.VSphere.PowerOffMode), "write hard, soft or trySoft (CAPV's modes), or leave it empty")
	}
	if !c.UsesCAPV() {
		if len(c.VSphere.CustomVMXKeys) > 0 {
			add("vsphere.customVMXKeys", "customVMXKeys apply to CAPV's machine templates, and the clusters are not CAPV clusters",
				"remove it, or add vsphere to clusterctl.infrastructureProviders")
		}
		return
	}
	if _, set := c.Variables["VSPHERE_TEMPLATE"]; set {
		add("variables.VSPHERE_TEMPLATE", "VSPHERE_TEMPLATE is derived from ova.images (the template the ova stage imports)",
			"remove it; list the OVA under ova.images with KUBERNETES_SEMVER matching the clusters' kubernetesVersion")
	}
	if c.Addons.CNIManifest == "" {
		add("addons.cniManifest", "CAPV's cluster template ships no CNI: nodes would stay NotReady",
			"export CNI_MANIFEST or set addons.cniManifest to a CNI manifest (path or URL)")
	}
	endpoints := map[string]string{}
	for _, id := range c.ClusterIDs() {
		cl, key := c.cluster(id), ClusterKey(id)
		if _, ok := c.TemplateFor(cl.KubernetesVersion); !ok {
			var have []string
			for _, o := range c.OVA.Images {
				have = append(have, fmt.Sprintf("%s (%s)", o.Name, o.Properties["KUBERNETES_SEMVER"]))
			}
			add(key+".kubernetesVersion", fmt.Sprintf("no OVA in ova.images has KUBERNETES_SEMVER %s (have: %s)", cl.KubernetesVersion, strings.Join(have, ", ")),
				"add the node OVA of that version to ova.images, or change the cluster's kubernetesVersion")
		}
		ep := c.ClusterctlVariables(id)["CONTROL_PLANE_ENDPOINT_IP"]
		switch {
		case ep == "":
			add(key+".variables.CONTROL_PLANE_ENDPOINT_IP", "no CONTROL_PLANE_ENDPOINT_IP for the "+id+" cluster (CAPV's kube-vip serves the API on it)",
				fmt.Sprintf("set %s.variables.CONTROL_PLANE_ENDPOINT_IP to a free IP of the VM network (the profile reads %s_CONTROL_PLANE_ENDPOINT_IP for the first two)", key, strings.ToUpper(RoleOf(id))))
		case endpoints[ep] != "":
			add(key+".variables.CONTROL_PLANE_ENDPOINT_IP", fmt.Sprintf("CONTROL_PLANE_ENDPOINT_IP %s is also the %s cluster's", ep, endpoints[ep]),
				"give each cluster its own free IP")
		default:
			endpoints[ep] = id
		}
	}
	// CAPV renders the password into double-quoted YAML (the cluster
	// template's Secret and CPI config) and single-quoted YAML (its
	// components' bootstrap Secret), by plain substitution: no escaping
	// makes " \ and ' valid in both. Said here, not as a YAML error from a
	// cluster apply an hour in.
	if bad := quoteChars(c.VSphere.Password.Reveal()); bad != "" {
		add("vsphere.password", "the vCenter password contains "+bad+": CAPV substitutes it unescaped into quoted YAML (its cluster template and components), which then does not parse",
			"use a vCenter account whose password has none of \" ' \\ for CAPV (the harness itself handles any password)")
	}
	if c.VSphere.SSHAuthorizedKey == "" {
		add("vsphere.sshAuthorizedKey", "CAPV puts an SSH key on every node; none is set",
			"export VSPHERE_SSH_AUTHORIZED_KEY (a public key, e.g. the content of ~/.ssh/id_ed25519.pub)")
	}
}

func quoteChars(s string) string {
	var found []string
	for _, c := range []string{`"`, `'`, `\`} {
		if strings.Contains(s, c) {
			found = append(found, c)
		}
	}
	return strings.Join(found, " ")
}
