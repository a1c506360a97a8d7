package main

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/tkg-e2e/harness/framework/capvtest"
)

const committed = "../../../config/flavors/infrastructure-vsphere/v1.16.1/cluster-template-vcsim.yaml"

func upstreamTemplate(t *testing.T) []byte {
	return capvtest.Template(t, "cluster-template.yaml")
}

func TestTheCommittedFlavorIsTheGeneratedOne(t *testing.T) {
	want, err := Flavor(upstreamTemplate(t))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(committed)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("%s is not what the generator makes of CAPV's template: regenerate it with\n  go run ./e2e/cmd/vcsim-flavor -upstream $(go mod download -json %s | jq -r .Dir)/templates/cluster-template.yaml -out %s",
			committed, capvtest.Module, strings.TrimPrefix(committed, "../../../"))
	}
}

// TestTheFlavorDiffersFromUpstreamOnlyInTheCSIObjectsAndKubeVIP compares
// the committed file with upstream object by object, without the
// generator: whatever the generator does, the file may differ from CAPV's
// template only in what this test allows.
func TestTheFlavorDiffersFromUpstreamOnlyInTheCSIObjectsAndKubeVIP(t *testing.T) {
	up := byObject(t, string(upstreamTemplate(t)))
	b, err := os.ReadFile(committed)
	if err != nil {
		t.Fatal(err)
	}
	fl := byObject(t, strings.SplitN(string(b), "\n", 3)[2]) // without the two header lines
	allowedGone := []string{"Secret/vsphere-config-secret", "ConfigMap/csi-manifests"}
	for k := range up {
		if _, ok := fl[k]; !ok && !slices.Contains(allowedGone, k) {
			t.Errorf("the flavor lacks %s", k)
		}
	}
	for _, k := range allowedGone {
		if _, ok := fl[k]; ok {
			t.Errorf("the flavor still has %s (the CSI driver's)", k)
		}
	}
	for k, doc := range fl {
		u, ok := up[k]
		switch {
		case !ok:
			t.Errorf("the flavor adds %s", k)
		case k == "KubeadmControlPlane/${CLUSTER_NAME}":
			if strings.Replace(doc, "kube-vip:v0.6.3", "kube-vip:v0.6.4", 1) != u {
				t.Errorf("%s differs from upstream in more than kube-vip's tag", k)
			}
		case strings.HasPrefix(k, "ClusterResourceSet/"):
			gone := slices.Sorted(slices.Values(minus(strings.Split(u, "\n"), strings.Split(doc, "\n"))))
			want := []string{"    name: csi-manifests", "    name: vsphere-config-secret", "  - kind: ConfigMap", "  - kind: Secret"}
			if !slices.Equal(gone, want) || len(minus(strings.Split(doc, "\n"), strings.Split(u, "\n"))) != 0 {
				t.Errorf("%s: removed %q, want exactly the CSI objects' entries", k, gone)
			}
		case doc != u:
			t.Errorf("%s differs from upstream", k)
		}
	}
}

func byObject(t *testing.T, s string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, d := range strings.Split(s, "\n---\n") {
		k, n := kindName(d)
		if k == "" || n == "" {
			t.Fatalf("a document without kind or name:\n%.300s", d)
		}
		out[k+"/"+n] = d
	}
	return out
}

// minus returns the lines of a not in b, in a's order (as a multiset).
func minus(a, b []string) []string {
	left := map[string]int{}
	for _, l := range b {
		left[l]++
	}
	var out []string
	for _, l := range a {
		if left[l] > 0 {
			left[l]--
			continue
		}
		out = append(out, l)
	}
	return out
}
