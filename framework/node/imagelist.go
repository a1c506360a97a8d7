package node

import (
	"bytes"
	"encoding/json"

	"github.com/distribution/reference"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
)

// nodeImageIDs lists a node's images once (`crictl images`), as normalized
// tag -> image ID: asking crictl for each image on its own costs an exec per
// image per node, most of the load-images step when every image is there.
func nodeImageIDs(n nodes.Node) (map[string]string, error) {
	var out bytes.Buffer
	if err := n.Command("crictl", "images", "-o", "json").SetStdout(&out).Run(); err != nil {
		return nil, err
	}
	var list struct {
		Images []struct {
			ID       string   `json:"id"`
			RepoTags []string `json:"repoTags"`
		} `json:"images"`
	}
	if err := json.Unmarshal(out.Bytes(), &list); err != nil {
		return nil, err
	}
	ids := map[string]string{}
	for _, im := range list.Images {
		for _, t := range im.RepoTags {
			ids[normalizedTag(t)] = im.ID
		}
	}
	return ids, nil
}

// normalizedTag is an image reference as containerd names it
// (docker.io/library/busybox:latest for busybox); the reference itself
// when it does not parse.
func normalizedTag(name string) string {
	r, err := reference.ParseNormalizedNamed(name)
	if err != nil {
		return name
	}
	return reference.TagNameOnly(r).String()
}
