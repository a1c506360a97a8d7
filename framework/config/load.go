package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/tkg-e2e/harness/framework/strictjson"
)

// LoadOptions say what to load.
type LoadOptions struct {
	// Path of the profile file (config/local.yaml).
	Path string
	// Overrides are merged over the profile in order: mappings merge key by
	// key, anything else replaces.
	Overrides []string
	// LookupEnv reads the environment; os.LookupEnv when nil (tests pass a map).
	LookupEnv func(string) (string, bool)
	// Intervals are the interval keys the harness reads, per stage or scope
	// (stages.Registry.IntervalKeys): each must resolve, and any other key
	// is reported as unknown.
	Intervals map[string][]string
	// DriverIntervals are the interval keys only one driver reads (driver →
	// scope → keys; the stage registry's DriverIntervalKeys): known to every
	// profile, required to resolve only with that driver. A driver with no
	// entry is one the binary does not link.
	DriverIntervals map[string]map[string][]string
	// LeaseValues are the variables a leased testbed's user data supplies
	// (Lease.LeaseValues); they win over the environment, as an overrides
	// file would. Nil on a config with a lease section means not leased yet:
	// unset variables outside lease: are then deferred to the lease
	// (Config.DeferredVariables) instead of reported.
	LeaseValues map[string]string
}

// Load reads, merges, expands, decodes and validates a config. On any problem
// it returns Problems listing all of them.
func Load(opts LoadOptions) (*Config, error) {
	lookupEnv := opts.LookupEnv
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	var probs Problems
	origin := map[*yaml.Node]string{}
	var merged *yaml.Node
	files := append([]string{opts.Path}, opts.Overrides...)
	for i, f := range files {
		what := "override file"
		if i == 0 {
			what = "config file"
		}
		doc, p := parseFile(f, what)
		probs = append(probs, p...)
		if doc == nil {
			continue
		}
		markOrigin(doc, f, origin)
		probs = append(probs, checkKeys(f, doc)...)
		if merged == nil {
			merged = doc
		} else {
			mergeInto(root(merged), root(doc))
		}
	}
	if merged == nil {
		return nil, probs
	}
	fileOf := func(n *yaml.Node) string {
		if f, ok := origin[n]; ok {
			return f
		}
		return opts.Path
	}

	if opts.LeaseValues != nil {
		env := lookupEnv
		lookupEnv = func(name string) (string, bool) {
			if v, ok := opts.LeaseValues[name]; ok {
				return v, true
			}
			return env(name)
		}
	}
	vars := variablesOf(root(merged), lookupEnv)
	lookup := func(name string) (string, bool) {
		if v, ok := lookupEnv(name); ok {
			return v, true
		}
		v, ok := vars[name]
		return v, ok
	}
	expandProbs := expandTree(root(merged), "", lookup, fileOf)
	var deferred []string
	deferredKeys := map[string]bool{}
	if opts.LeaseValues == nil && hasLease(root(merged)) {
		expandProbs, deferred, deferredKeys = deferToLease(expandProbs)
	}
	probs = append(probs, expandProbs...)

	idx := nodeIndex{}
	indexTree(root(merged), reflect.TypeOf(Config{}), "", fileOf, idx)
	scalarProbs := checkScalars(idx)
	probs = append(probs, scalarProbs...)

	// Decode and validate even when earlier phases found problems, so that
	// every problem of the file is reported in one go.
	cfg := &Config{}
	if err := root(merged).Decode(cfg); err != nil && len(scalarProbs) == 0 {
		probs = append(probs, decodeProblem(opts.Path, err))
	}
	abs, _ := filepath.Abs(opts.Path)
	cfg.Source = abs
	cfg.intervalKeys = opts.Intervals
	cfg.driverIntervalKeys = opts.DriverIntervals
	cfg.Overrides = opts.Overrides
	// Environment values win over the file's variables (Cluster API's rule),
	// and clusterctl reads the same map.
	for name := range cfg.Variables {
		if v, ok := lookupEnv(name); ok {
			cfg.Variables[name] = v
		}
	}
	cfg.defaults()
	cfg.resolvePaths(idx)
	cfg.resolveTanzuCLI(idx, lookupEnv)
	later := cfg.validate(idx)
	if len(deferredKeys) > 0 {
		// A value the lease will supply is empty until then: its "required"
		// is not a problem yet; the load after the lease checks it.
		later = slices.DeleteFunc(later, func(p Problem) bool { return deferredKeys[p.Key] })
		cfg.DeferredVariables = deferred
	}
	probs = append(probs, notAlreadyReported(later, probs)...)
	if len(probs) > 0 {
		return nil, probs
	}
	return cfg, nil
}

// hasLease reports whether the merged config has a non-empty lease section.
func hasLease(root *yaml.Node) bool {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "lease" {
			v := root.Content[i+1]
			return v.Kind == yaml.MappingNode && len(v.Content) > 0
		}
	}
	return false
}

// deferToLease takes the unset-variable problems outside the lease section
// out of probs: the lease's user data is expected to supply them.
func deferToLease(probs Problems) (kept Problems, names []string, keys map[string]bool) {
	keys = map[string]bool{}
	for _, p := range probs {
		if p.unsetVar == "" || p.Key == "lease" || strings.HasPrefix(p.Key, "lease.") {
			kept = append(kept, p)
			continue
		}
		keys[p.Key] = true
		if !slices.Contains(names, p.unsetVar) {
			names = append(names, p.unsetVar)
		}
	}
	sort.Strings(names)
	return kept, names, keys
}

// notAlreadyReported drops semantic problems on keys that already have one (an
// unset variable leaves an empty value that is also "required").
func notAlreadyReported(later, earlier Problems) Problems {
	seen := map[string]bool{}
	for _, p := range earlier {
		seen[p.Key] = true
	}
	var out Problems
	for _, p := range later {
		if !seen[p.Key] {
			out = append(out, p)
		}
	}
	return out
}

func parseFile(path, what string) (*yaml.Node, Problems) {
	b, err := os.ReadFile(path)
	if err != nil {
		fix := "pass an existing file (CONFIG=config/local.yaml or config/vsphere.yaml)"
		if what == "override file" {
			fix = "pass an existing overrides file in CONFIG_OVERRIDES, or unset it"
		}
		return nil, Problems{{File: path, Message: fmt.Sprintf("cannot read %s: %v", what, unwrapPathErr(err)), Fix: fix}}
	}
	doc := &yaml.Node{}
	if err := yaml.Unmarshal(b, doc); err != nil {
		return nil, Problems{yamlSyntaxProblem(path, err)}
	}
	if len(doc.Content) == 0 {
		return nil, Problems{{File: path, Message: what + " is empty", Fix: "start from config/local.yaml"}}
	}
	return doc, nil
}

func unwrapPathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

var yamlLine = regexp.MustCompile(`line (\d+): (.*)`)

func yamlSyntaxProblem(file string, err error) Problem {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	p := Problem{File: file, Message: "not valid YAML: " + msg, Fix: "fix the YAML syntax (indentation, quotes, tabs)"}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		p.Line, _ = strconv.Atoi(m[1])
		p.Message = "not valid YAML: " + m[2]
	}
	return p
}

func decodeProblem(file string, err error) Problem {
	return Problem{File: file, Message: err.Error()}
}

func root(doc *yaml.Node) *yaml.Node {
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		return doc.Content[0]
	}
	return doc
}

func markOrigin(n *yaml.Node, file string, origin map[*yaml.Node]string) {
	origin[n] = file
	for _, c := range n.Content {
		markOrigin(c, file, origin)
	}
}

// mergeInto merges src over dst: mappings key by key, everything else replaced.
func mergeInto(dst, src *yaml.Node) {
	if dst.Kind != yaml.MappingNode || src.Kind != yaml.MappingNode {
		*dst = *src
		return
	}
	for i := 0; i+1 < len(src.Content); i += 2 {
		k, v := src.Content[i], src.Content[i+1]
		found := false
		for j := 0; j+1 < len(dst.Content); j += 2 {
			if dst.Content[j].Value == k.Value {
				if dst.Content[j+1].Kind == yaml.MappingNode && v.Kind == yaml.MappingNode {
					mergeInto(dst.Content[j+1], v)
				} else {
					dst.Content[j+1] = v
				}
				found = true
				break
			}
		}
		if !found {
			dst.Content = append(dst.Content, k, v)
		}
	}
}

// variablesOf reads the variables section; its values may reference the environment only.
func variablesOf(top *yaml.Node, lookupEnv lookupFunc) map[string]string {
	out := map[string]string{}
	if top.Kind != yaml.MappingNode {
		return out
	}
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value != "variables" || top.Content[i+1].Kind != yaml.MappingNode {
			continue
		}
		m := top.Content[i+1]
		for j := 0; j+1 < len(m.Content); j += 2 {
			v, _ := expand(m.Content[j+1].Value, lookupEnv)
			out[m.Content[j].Value] = v
		}
	}
	return out
}

func expandTree(n *yaml.Node, path string, lookup lookupFunc, fileOf func(*yaml.Node) string) Problems {
	var probs Problems
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			probs = append(probs, expandTree(v, join(path, k.Value), lookup, fileOf)...)
		}
	case yaml.SequenceNode:
		for i, v := range n.Content {
			probs = append(probs, expandTree(v, fmt.Sprintf("%s[%d]", path, i), lookup, fileOf)...)
		}
	case yaml.ScalarNode:
		// Secret keys may only be written as a pure ${VAR} reference.
		if isSecretKey(path) && n.Value != "" && !isPureRef(n.Value) {
			probs = append(probs, Problem{File: fileOf(n), Line: n.Line, Key: path,
				Message: "a literal secret is not allowed in a config file",
				Fix:     literalSecretFix(path)})
			n.Value = ""
			return probs
		}
		if !strings.Contains(n.Value, "${") {
			return nil
		}
		v, missing := expand(n.Value, lookup)
		for _, name := range missing {
			probs = append(probs, Problem{File: fileOf(n), Line: n.Line, Key: path,
				Message:  fmt.Sprintf("variable %s is not set", name),
				Fix:      fmt.Sprintf("export %s=<value>, or set it under variables: in an overrides file (CONFIG_OVERRIDES=...)", name),
				unsetVar: name})
		}
		n.Value = v
		if n.Style == 0 || n.Style == yaml.DoubleQuotedStyle || n.Style == yaml.SingleQuotedStyle {
			// Let the expanded text resolve as YAML would ("true" -> bool, "3" -> int).
			n.Tag = ""
			n.Style = 0
		}
	}
	return probs
}

// indexTree records where every key of the merged tree sits.
func indexTree(n *yaml.Node, t reflect.Type, path string, fileOf func(*yaml.Node) string, idx nodeIndex) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		fields := strictjson.Fields(t, "yaml")
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if ft, ok := fields[k.Value]; ok {
				p := join(path, k.Value)
				idx[p] = located{node: v, file: fileOf(v), kind: derefKind(ft)}
				indexTree(v, ft, p, fileOf, idx)
			}
		}
	case t.Kind() == reflect.Map && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := fmt.Sprintf("%s[%s]", path, n.Content[i].Value)
			idx[p] = located{node: n.Content[i+1], file: fileOf(n.Content[i+1]), kind: derefKind(t.Elem())}
			indexTree(n.Content[i+1], t.Elem(), p, fileOf, idx)
		}
	case t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode:
		for i, v := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			idx[p] = located{node: v, file: fileOf(v), kind: derefKind(t.Elem())}
			indexTree(v, t.Elem(), p, fileOf, idx)
		}
	}
}

func derefKind(t reflect.Type) reflect.Kind {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind()
}

// checkScalars reports values that will not decode into their field's type,
// after expansion, so "workerMachineCount: two" is named with its line.
func checkScalars(idx nodeIndex) Problems {
	var probs Problems
	for key, loc := range idx {
		if loc.node.Kind != yaml.ScalarNode || loc.node.Tag == "!!null" {
			continue
		}
		v := loc.node.Value
		switch loc.kind {
		case reflect.Int:
			if _, err := strconv.Atoi(v); err != nil {
				probs = append(probs, Problem{File: loc.file, Line: loc.node.Line, Key: key, Message: fmt.Sprintf("%q is not a whole number", v), Fix: "write a number, e.g. 1"})
			}
		case reflect.Bool:
			if _, err := strconv.ParseBool(v); err != nil {
				probs = append(probs, Problem{File: loc.file, Line: loc.node.Line, Key: key, Message: fmt.Sprintf("%q is not true or false", v), Fix: "write true or false"})
			}
		}
	}
	return probs
}
