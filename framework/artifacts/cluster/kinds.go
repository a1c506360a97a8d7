package cluster

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// kind is one listable resource chosen for the dump.
type kind struct {
	gvr        schema.GroupVersionResource
	kind       string
	namespaced bool
}

// builtinKinds are the core kinds worth reading after a failure. ConfigMaps
// and CRDs are left out: they are large and rarely explain a failure; the
// names of all served kinds are in api-resources.txt.
var builtinKinds = map[string][]string{
	"":                       {"nodes", "pods", "namespaces", "services", "secrets", "persistentvolumeclaims", "persistentvolumes"},
	"apps":                   {"deployments", "daemonsets", "statefulsets"},
	"apiregistration.k8s.io": {"apiservices"}, // kapp-controller's aggregated API shows FailedDiscoveryCheck here
	"cert-manager.io":        {"certificates", "issuers", "clusterissuers", "certificaterequests"},
	"packaging.carvel.dev":   {"packageinstalls", "packagerepositories"},
	"kappctrl.k14s.io":       {"apps"},
}

// wantGroup says whether every kind of a group is dumped: all Cluster API
// groups (core, providers, clusterctl's own), whatever providers are
// installed, and TKG's groups when their CRDs exist.
func wantGroup(group string) bool {
	return group == "cluster.x-k8s.io" || strings.HasSuffix(group, ".cluster.x-k8s.io") ||
		group == "tanzu.vmware.com" || strings.HasSuffix(group, ".tanzu.vmware.com")
}

// selectKinds picks the kinds to dump from discovery's preferred versions.
func selectKinds(lists []*metav1.APIResourceList) []kind {
	var out []kind
	seen := map[schema.GroupResource]bool{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") {
				continue
			}
			if !wantGroup(gv.Group) && !slices.Contains(builtinKinds[gv.Group], r.Name) {
				continue
			}
			gr := schema.GroupResource{Group: gv.Group, Resource: r.Name}
			if seen[gr] {
				continue
			}
			seen[gr] = true
			out = append(out, kind{gvr: gv.WithResource(r.Name), kind: r.Kind, namespaced: r.Namespaced})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].gvr.Group != out[j].gvr.Group {
			return out[i].gvr.Group < out[j].gvr.Group
		}
		return out[i].gvr.Resource < out[j].gvr.Resource
	})
	return out
}

// secretsKind is dumped before the others, without waiting for discovery.
var secretsKind = kind{gvr: schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, kind: "Secret", namespaced: true}

// file is where a kind's dump goes, relative to the cluster folder.
func (k kind) file() string {
	g := k.gvr.Group
	if g == "" {
		g = "core"
	}
	return "resources/" + g + "/" + k.gvr.Resource + ".yaml"
}

// writeAPIResources lists every served kind, so a reader knows which CRDs
// (TKG, Carvel, providers) existed even when they were not dumped.
func (c *collection) writeAPIResources(lists []*metav1.APIResourceList) error {
	var lines []string
	for _, l := range lists {
		for _, r := range l.APIResources {
			if !strings.Contains(r.Name, "/") {
				lines = append(lines, fmt.Sprintf("%-45s %-30s namespaced=%t", r.Name+"."+l.GroupVersion, r.Kind, r.Namespaced))
			}
		}
	}
	sort.Strings(lines)
	return c.w.WriteFile(path.Join(c.folder, "api-resources.txt"), []byte(strings.Join(lines, "\n")+"\n"))
}
