package config

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

func (idx nodeIndex) at(key string) located { return idx[key] }

// nearest is where a problem about key points: the key itself, or else
// the closest enclosing key some file sets (a required key no file sets has
// no line of its own), or else the profile file.
func (idx nodeIndex) nearest(key, profile string) located {
	for k := key; k != ""; {
		if l, ok := idx[k]; ok && l.file != "" {
			return l
		}
		i := strings.LastIndexAny(k, ".[")
		if i < 0 {
			break
		}
		k = k[:i]
	}
	return located{file: profile}
}

func (l located) problem(key, msg, fix string) Problem {
	p := Problem{File: l.file, Key: key, Message: msg, Fix: fix}
	if l.node != nil {
		p.Line = l.node.Line
	}
	return p
}

func (c *Config) defaults() {
	for i := range c.Images {
		if c.Images[i].LoadBehavior == "" {
			c.Images[i].LoadBehavior = "mustLoad"
		}
	}
	for i := range c.Conformance.Images {
		if c.Conformance.Images[i].LoadBehavior == "" {
			c.Conformance.Images[i].LoadBehavior = "mustLoad"
		}
	}
	if c.Conformance.GinkgoNodes == 0 {
		c.Conformance.GinkgoNodes = 1
	}
	if c.OVA.Concurrency == 0 {
		c.OVA.Concurrency = 4
	}
	if c.OVA.MaxDownloadSize == "" {
		c.OVA.MaxDownloadSize = "20Gi"
	}
	for _, cl := range []*WorkloadCluster{&c.Clusters.Management, &c.Clusters.Workload} {
		if cl.Namespace == "" {
			cl.Namespace = "default"
		}
	}
	for i := range c.Clusters.Workloads {
		c.Clusters.Workloads[i].inherit(c.Clusters.Workload)
	}
	if u := c.Clusters.Upgrade; u != nil {
		u.inherit(c.Clusters.Workload)
	}
	if u := c.Clusters.ProviderUpgrade; u != nil {
		u.inherit(c.Clusters.Management)
	}
	if u := c.Clusters.ProviderUpgradeWorkload; u != nil {
		u.inherit(c.Clusters.Workload)
	}
	if c.Artifacts.MaxFileSize == "" {
		c.Artifacts.MaxFileSize = "10Mi"
	}
	if c.Artifacts.ItemTimeout == "" {
		c.Artifacts.ItemTimeout = "30s"
	}
	c.Lease.defaults()
	c.Cleanup.defaults()
	c.defaultDriver()
	c.infra = c.firstInfrastructure()
}

// resolvePaths makes relative file paths absolute against the directory of the
// file that set them, so a profile works from any working directory.
func (c *Config) resolvePaths(idx nodeIndex) {
	fix := func(key string, p *string) {
		if *p == "" || isURL(*p) || filepath.IsAbs(*p) {
			return
		}
		base := filepath.Dir(c.Source)
		if loc, ok := idx[key]; ok && loc.file != "" {
			base = filepath.Dir(loc.file)
		}
		abs, err := filepath.Abs(filepath.Join(base, strings.TrimPrefix(*p, "file://")))
		if err == nil {
			*p = abs
		}
	}
	fix("clusterctl.configPath", &c.Clusterctl.ConfigPath)
	fix("providerUpgrade.clusterctlConfigPath", &c.ProviderUpgrade.ClusterctlConfigPath)
	fix("vsphere.passwordFile", &c.VSphere.PasswordFile)
	fix("vsphere.caFile", &c.VSphere.CAFile)
	fix("addons.cniManifest", &c.Addons.CNIManifest)
	fix("addons.kappControllerManifest", &c.Addons.KappControllerManifest)
	fix("placement.matrix", &c.Placement.Matrix)
	fix("packages.expected", &c.Packages.Expected)
	fix("conformance.kubetestConfig", &c.Conformance.KubetestConfig)
	for i := range c.OVA.Images {
		fix(fmt.Sprintf("ova.images[%d].source", i), &c.OVA.Images[i].Source)
	}
}

func isURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

var (
	dns1123    = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	k8sVersion = regexp.MustCompile(`^v\d+\.\d+\.\d+([-+][0-9A-Za-z.+-]+)?$`)
	quantity   = regexp.MustCompile(`^(\d+)(Ki|Mi|Gi)?$`)
)

func (c *Config) validate(idx nodeIndex) Problems {
	var probs Problems
	add := func(key, msg, fix string) { probs = append(probs, idx.nearest(key, c.Source).problem(key, msg, fix)) }
	if idx.at("profile").node == nil {
		// A missing key has no line; point at the file.
		idx["profile"] = located{file: c.Source}
	}

	switch c.Profile {
	case "local", "vsphere":
	case "":
		add("profile", "profile is required", "set profile: local or profile: vsphere")
	default:
		add("profile", fmt.Sprintf("unknown profile %q", c.Profile), "use local or vsphere")
	}
	if c.Timeout == "" {
		add("timeout", "timeout is required (it bounds the whole suite)", `set e.g. timeout: 75m`)
	} else {
		checkPositiveDuration(add, "timeout", c.Timeout, "75m")
	}
	probs = append(probs, c.validateDriver(idx)...)
	probs = append(probs, c.validateIntervals(idx)...)

	validateImages(add, "images", c.Images, "registry.k8s.io/cluster-api/cluster-api-controller:v1.14.0")

	probs = append(probs, c.validateClusterctl(add)...)
	probs = append(probs, c.validateVSphere(add)...)
	probs = append(probs, c.validateNodeSSH(idx)...)
	probs = append(probs, c.validateSecrets(idx)...)
	c.validateOVAs(add)
	c.validateClusters(add)
	c.validateUpgrade(add)
	c.validateProviderUpgrade(add)
	c.validateCAPV(add)

	c.checkFileOrURL(add, "addons.cniManifest", c.Addons.CNIManifest, c.Profile == "local", "CNI_MANIFEST")
	c.checkFileOrURL(add, "addons.kappControllerManifest", c.Addons.KappControllerManifest, false, "KAPP_CONTROLLER_MANIFEST")
	c.checkFileOrURL(add, "placement.matrix", c.Placement.Matrix, true, "")
	c.checkFileOrURL(add, "packages.expected", c.Packages.Expected, true, "")
	c.validateConformance(add)
	c.validateCleanup(add)
	c.Lease.validate(add)
	if c.Packages.InstallLocalSet && c.Addons.KappControllerManifest == "" {
		add("packages.installLocalSet", "installing the local package set needs kapp-controller", "set addons.kappControllerManifest")
	}

	if !quantity.MatchString(c.Artifacts.MaxFileSize) {
		add("artifacts.maxFileSize", fmt.Sprintf("%q is not a size", c.Artifacts.MaxFileSize), "write bytes or a number with Ki, Mi or Gi, e.g. 10Mi")
	}
	checkPositiveDuration(add, "artifacts.itemTimeout", c.Artifacts.ItemTimeout, "30s")
	if v := c.Host.DiskPerNodeGiB; v != nil && (*v < 0 || *v > 100) {
		add("host.diskPerNodeGiB", fmt.Sprintf("%g is not a node's disk in GiB", *v), "write a number from 0 (no check) to 100, e.g. 2")
	}
	return probs
}

func (c *Config) validateClusterctl(add func(key, msg, fix string)) Problems {
	cc := c.Clusterctl
	if cc.ConfigPath != "" {
		c.checkFileOrURL(add, "clusterctl.configPath", cc.ConfigPath, true, "CLUSTERCTL_CONFIG")
	}
	if cc.CoreProvider == "" {
		add("clusterctl.coreProvider", "coreProvider is required", "set coreProvider: cluster-api")
	}
	if len(cc.InfrastructureProviders) == 0 {
		add("clusterctl.infrastructureProviders", "at least one infrastructure provider is required", "e.g. [docker] for the local profile, [vsphere] for vSphere")
	}
	return nil
}

func (c *Config) validateVSphere(add func(key, msg, fix string)) Problems {
	v := &c.VSphere
	if v.PasswordFile != "" {
		b, err := os.ReadFile(v.PasswordFile)
		switch {
		case err != nil:
			add("vsphere.passwordFile", fmt.Sprintf("cannot read the password file: %v", unwrapPathErr(err)), "point it at a readable file holding only the password")
		case strings.TrimSpace(string(b)) == "":
			add("vsphere.passwordFile", "the password file is empty", "write the password into it")
		default:
			if v.Password != "" {
				add("vsphere.passwordFile", "both password and passwordFile are set", "keep one of them")
			}
			v.Password = Secret(strings.TrimRight(string(b), "\r\n"))
		}
	}
	if v.Simulator {
		return nil
	}
	required := []struct{ key, val, env string }{
		{"vsphere.server", v.Server, "VSPHERE_SERVER"},
		{"vsphere.username", v.Username, "VSPHERE_USERNAME"},
		{"vsphere.datacenter", v.Datacenter, "VSPHERE_DATACENTER"},
		{"vsphere.folder", v.Folder, "VSPHERE_FOLDER"},
		{"vsphere.datastore", v.Datastore, "VSPHERE_DATASTORE"},
		{"vsphere.resourcePool", v.ResourcePool, "VSPHERE_RESOURCE_POOL"},
		{"vsphere.network", v.Network, "VSPHERE_NETWORK"},
	}
	for _, r := range required {
		if r.val == "" {
			add(r.key, "required when vsphere.simulator is false", fmt.Sprintf("export %s or set %s", r.env, r.key))
		}
	}
	if v.Password == "" {
		add("vsphere.password", "no vCenter password", "export VSPHERE_PASSWORD, or set vsphere.passwordFile")
	}
	switch {
	case v.Server == "":
	case strings.Contains(v.Server, "/") && !strings.HasPrefix(v.Server, "https://"):
		add("vsphere.server", fmt.Sprintf("%q is neither a host name nor an https URL", v.Server), "write vcenter.example.com or https://vcenter.example.com/sdk")
	case serverHostname(v.Server) == "":
		// A script that builds the address from an empty variable
		// (":8989") would otherwise fail at login with a TLS error
		// about "https://:8989/sdk", far from its cause.
		add("vsphere.server", fmt.Sprintf("%q has no host", v.Server), "write the vCenter's host name or IP, e.g. vcenter.example.com or 10.0.0.5:8989 (is the variable that should hold the host empty?)")
	}
	// With neither thumbprint nor insecure, the system roots plus caFile are trusted.
	if v.CAFile != "" {
		checkCAFile(add, "vsphere.caFile", v.CAFile)
	}
	return nil
}

// checkCAFile reports a CA bundle that is unreadable or holds no PEM
// certificate, at load rather than at the first connection.
func checkCAFile(add func(key, msg, fix string), key, path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		add(key, fmt.Sprintf("cannot read the CA file %s: %v", path, unwrapPathErr(err)), "point it at a readable PEM bundle (relative paths are relative to the config file)")
		return
	}
	n := 0
	for rest := b; ; {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			break
		}
		if blk.Type != "CERTIFICATE" {
			continue
		}
		if _, err := x509.ParseCertificate(blk.Bytes); err != nil {
			add(key, fmt.Sprintf("%s holds a certificate that does not parse: %v", path, err), "give the CA bundle as PEM certificates")
			return
		}
		n++
	}
	if n == 0 {
		add(key, fmt.Sprintf("%s holds no PEM certificate (-----BEGIN CERTIFICATE-----)", path),
			"give vCenter's CA bundle in PEM form, or set tlsThumbprint (govc about.cert -thumbprint) instead")
	}
}

func (c *Config) validateOVAs(add func(key, msg, fix string)) {
	if c.OVA.Concurrency < 1 {
		add("ova.concurrency", "must be at least 1", "set ova.concurrency: 4")
	}
	if n := parseQuantity(c.OVA.MaxDownloadSize); n <= 0 {
		add("ova.maxDownloadSize", fmt.Sprintf("%q is not a positive size", c.OVA.MaxDownloadSize), "write bytes or a number with Ki, Mi or Gi, e.g. 20Gi")
	}
	seen := map[string]bool{}
	for i, o := range c.OVA.Images {
		key := fmt.Sprintf("ova.images[%d]", i)
		if o.Name == "" {
			add(key+".name", "template name is empty", "set name: to the template name, e.g. ubuntu-2204-kube-v1.33.1")
		} else if seen[o.Name] {
			add(key+".name", fmt.Sprintf("template %q is listed twice", o.Name), "remove the duplicate")
		}
		seen[o.Name] = true
		switch {
		case o.Source == "":
			add(key+".source", "source is empty", "give a local path or an http(s) URL of the OVA")
		case o.Generate != nil:
			if o.Generate.DiskMiB < 1 {
				add(key+".generate.diskMiB", "must be at least 1", "set diskMiB: 1")
			}
		case isURL(o.Source):
			if o.SHA256 == "" && strings.HasPrefix(strings.ToLower(o.Source), "http://") {
				add(key+".source", "an http:// OVA source needs its sha256: nothing else authenticates the download",
					"add sha256: <64 hex digits> from the release's checksum file to this image, or use an https URL")
			}
		default:
			c.checkReadable(add, key+".source", o.Source, "the OVA")
		}
		if o.SHA256 != "" && !sha256Hex.MatchString(o.SHA256) {
			add(key+".sha256", fmt.Sprintf("%q is not a sha256 (64 hex digits)", o.SHA256), "copy the OVA's line from the release's checksum file (sha256sum)")
		}
	}
}

var sha256Hex = regexp.MustCompile(`^[0-9a-fA-F]{64}$`)

// MaxDownloadBytes parses ova.maxDownloadSize.
func (o OVAStage) MaxDownloadBytes() int64 { return parseQuantity(o.MaxDownloadSize) }

func (c *Config) checkReadable(add func(key, msg, fix string), key, path, what string) {
	f, err := os.Open(path)
	if err != nil {
		add(key, fmt.Sprintf("cannot read %s %s: %v", what, path, unwrapPathErr(err)), "check the path (relative paths are relative to the config file)")
		return
	}
	defer f.Close()
	st, err := f.Stat()
	switch {
	case err != nil:
		add(key, fmt.Sprintf("cannot stat %s: %v", path, err), "")
	case st.IsDir():
		add(key, fmt.Sprintf("%s is a directory, not a file", path), "point it at the file")
	case st.Size() == 0:
		add(key, fmt.Sprintf("%s is empty", path), "point it at a complete file")
	}
}

func (c *Config) checkFileOrURL(add func(key, msg, fix string), key, val string, required bool, env string) {
	if val == "" {
		if required {
			fix := "set " + key
			if env != "" {
				fix += fmt.Sprintf(" (the local profile reads it from %s: run `. /var/cache/testbed/out/env.sh` after the testbed kit, see README)", env)
			}
			add(key, "is required", fix)
		}
		return
	}
	if isURL(val) {
		return
	}
	c.checkReadable(add, key, val, "file")
}

func (c *Config) validateClusters(add func(key, msg, fix string)) {
	b := c.Clusters.Bootstrap
	if !dns1123.MatchString(b.Name) || len(b.Name) > 40 {
		add("clusters.bootstrap.name", fmt.Sprintf("%q is not a valid kind cluster name", b.Name), "use lower-case letters, digits and '-', at most 40 characters")
	} else if p := c.nameTooLongForRunSuffix(b.Name); p != "" {
		add("clusters.bootstrap.name", p, fixTooLongForRunSuffix)
	}
	if b.NodeImage == "" {
		add("clusters.bootstrap.nodeImage", "nodeImage is required", "e.g. kindest/node:v1.33.1 (by tag; the kit exports KIND_NODE_IMAGE)")
	}
	if t := c.Clusters.NodeDeletionTimeoutSeconds; t != nil && *t < 0 {
		add("clusters.nodeDeletionTimeoutSeconds", fmt.Sprintf("%d is negative", *t), "use 0 (retry deleting a removed Machine's Node until it is gone) or a number of seconds, or leave it out for Cluster API's default")
	}
	names := map[string]string{}
	for _, id := range c.ClusterIDs() {
		cl, key := *c.cluster(id), ClusterKey(id)
		if !dns1123.MatchString(cl.Name) || len(cl.Name) > 40 {
			add(key+".name", fmt.Sprintf("%q is not a valid cluster name", cl.Name), "use lower-case letters, digits and '-', at most 40 characters")
		} else if p := c.nameTooLongForRunSuffix(cl.Name); p != "" {
			add(key+".name", p, fixTooLongForRunSuffix)
		} else if other, dup := names[cl.Name]; dup {
			add(key+".name", fmt.Sprintf("%q is also the %s cluster's name", cl.Name, other), "give each cluster its own name")
		}
		names[cl.Name] = id
		if !dns1123.MatchString(cl.Namespace) {
			add(key+".namespace", fmt.Sprintf("%q is not a valid namespace", cl.Namespace), "use lower-case letters, digits and '-'")
		}
		if !k8sVersion.MatchString(cl.KubernetesVersion) {
			add(key+".kubernetesVersion", fmt.Sprintf("%q is not a Kubernetes version", cl.KubernetesVersion), "write it like v1.33.1")
		}
		if cl.ControlPlaneMachineCount < 1 {
			add(key+".controlPlaneMachineCount", "must be at least 1", "set controlPlaneMachineCount: 1")
		}
		if cl.WorkerMachineCount < 0 {
			add(key+".workerMachineCount", "must not be negative", "set workerMachineCount: 1")
		}
		if cl.Flavor != "" && !dns1123.MatchString(cl.Flavor) {
			add(key+".flavor", fmt.Sprintf("%q is not a flavor name", cl.Flavor), "e.g. development")
		}
	}
	if b.Name != "" && names[b.Name] != "" {
		add("clusters.bootstrap.name", fmt.Sprintf("%q is also a Cluster API cluster's name", b.Name), "give the kind cluster its own name (CAPD names its containers after the cluster)")
	}
}

// ByteSize parses artifacts.maxFileSize.
func (a Artifacts) ByteSize() int64 { return parseQuantity(a.MaxFileSize) }

// parseQuantity reads bytes or a number with Ki, Mi or Gi; 0 when it is not one.
func parseQuantity(q string) int64 {
	m := quantity.FindStringSubmatch(q)
	if m == nil {
		return 0
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	switch m[2] {
	case "Ki":
		n <<= 10
	case "Mi":
		n <<= 20
	case "Gi":
		n <<= 30
	}
	return n
}

// ItemTimeoutDuration parses artifacts.itemTimeout.
func (a Artifacts) ItemTimeoutDuration() time.Duration { return mustDuration(a.ItemTimeout) }

// SuiteTimeout parses timeout.
func (c *Config) SuiteTimeout() time.Duration { return mustDuration(c.Timeout) }

// checkPositiveDuration reports a value at key that is not a positive Go
// duration, with an example of one.
func checkPositiveDuration(add func(key, msg, fix string), key, v, example string) {
	if d, err := time.ParseDuration(v); err != nil || d <= 0 {
		add(key, fmt.Sprintf("%q is not a positive duration", v), "write a Go duration, e.g. "+example)
	}
}

// mustDuration parses a duration validation has already checked.
func mustDuration(s string) time.Duration {
	d, _ := time.ParseDuration(s)
	return d
}

func (c *Config) validateConformance(add func(key, msg, fix string)) {
	cf := c.Conformance
	// Not required here: only a run that reaches the conformance stage needs
	// it, and that stage's preflight says so before the first cluster.
	c.checkFileOrURL(add, "conformance.kubetestConfig", cf.KubetestConfig, false, "")
	if isURL(cf.KubetestConfig) {
		add("conformance.kubetestConfig", "must be a file (kubetest reads it from disk)", "point at a file, e.g. conformance/local-subset.yaml")
	}
	validateImages(add, "conformance.images", cf.Images, "registry.k8s.io/e2e-test-images/agnhost:2.53")
	if cf.GinkgoNodes < 0 {
		add("conformance.ginkgoNodes", fmt.Sprintf("%d is negative", cf.GinkgoNodes), "use 1 (the default) or more to run tests in parallel")
	}
}

// ConformanceImage is the conformance image the stage runs: the configured
// one, or upstream's for the workload cluster's Kubernetes version.
func (c *Config) ConformanceImage() string {
	if c.Conformance.Image != "" {
		return c.Conformance.Image
	}
	v := c.Clusters.Workload.KubernetesVersion
	if i := strings.IndexByte(v, '+'); i >= 0 {
		v = v[:i] // registry.k8s.io/conformance tags have no build metadata
	}
	return "registry.k8s.io/conformance:" + v
}

func validateImages(add func(key, msg, fix string), key string, images []Image, example string) {
	for i, img := range images {
		at := fmt.Sprintf("%s[%d]", key, i)
		if img.Name == "" {
			add(at+".name", "image name is empty", "give the full image reference, e.g. "+example)
		}
		if img.LoadBehavior != "mustLoad" && img.LoadBehavior != "tryLoad" {
			add(at+".loadBehavior", fmt.Sprintf("unknown loadBehavior %q", img.LoadBehavior), "use mustLoad or tryLoad")
		}
		for _, r := range img.Roles {
			if !slices.Contains(ImageRoles, r) {
				add(at+".roles", fmt.Sprintf("unknown role %q", r), "use "+strings.Join(ImageRoles, ", ")+", or leave roles out for every cluster")
			}
		}
	}
}
