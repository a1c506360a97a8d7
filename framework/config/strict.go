package config

import (
	"reflect"

	"go.yaml.in/yaml/v3"

	"github.com/tkg-e2e/harness/framework/strictjson"
)

// nodeIndex maps a dotted key path to its value node and the file it came from,
// so that problems found after decoding still point at a file and line.
type nodeIndex map[string]located

type located struct {
	node *yaml.Node
	file string
	// kind is the Go kind the value decodes into.
	kind reflect.Kind
}

// checkKeys reports every key of one config file that Config does not have,
// and every value of the wrong shape, as Problems of that file.
func checkKeys(file string, doc *yaml.Node) Problems {
	var probs Problems
	for _, p := range strictjson.CheckKeys(doc, reflect.TypeFor[Config](), "yaml") {
		key := p.Path
		if key == "" {
			key = "(top level)"
		}
		probs = append(probs, Problem{File: file, Line: p.Line, Key: key, Message: p.Message, Fix: p.Fix})
	}
	return probs
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
