package config

import (
	"errors"
	"fmt"
	"strings"
)

// maxName is the longest kind or Cluster API cluster name (node, container
// and machine names append suffixes to it); runSuffixMax is the longest
// "-<run short ID>" (framework/run: 4-6 characters).
const (
	maxName      = 40
	runSuffixMax = 1 + 6
)

const fixTooLongForRunSuffix = "shorten it, or set clusters.uniqueNames: false to use the name as written"

// UniqueNames reports whether cluster names carry the run's short ID
// (clusters.uniqueNames, default true).
func (c *Config) UniqueNames() bool {
	return c.Clusters.UniqueNames == nil || *c.Clusters.UniqueNames
}

func (c *Config) nameTooLongForRunSuffix(name string) string {
	if !c.UniqueNames() || len(name)+runSuffixMax <= maxName {
		return ""
	}
	return fmt.Sprintf("%q is %d characters: with the run's short ID appended (\"-k3f9a\") it would be longer than %d",
		name, len(name), maxName)
}

// SetRunNames gives the clusters the names of this run, once its short ID
// is known (the run state's ShortID): kept[id] ("bootstrap",
// "management", "workload", "workload-2", ...) when the run already
// recorded that cluster (RESUME=1 re-attaches to the names in state.json); else, with
// UniqueNames, "<name>-<short>"; else the name as written. A name that
// already ends in "-<short>" is kept.
func (c *Config) SetRunNames(short string, kept map[string]string) error {
	if c.UniqueNames() && short == "" {
		return errors.New("config: clusters.uniqueNames needs the run's short ID")
	}
	var errs []error
	type named struct {
		id, key string
		name    *string
	}
	all := []named{{"bootstrap", "clusters.bootstrap", &c.Clusters.Bootstrap.Name}}
	for _, id := range c.ClusterIDs() {
		all = append(all, named{id, ClusterKey(id), &c.cluster(id).Name})
	}
	for _, n := range all {
		switch {
		case kept[n.id] != "":
			*n.name = kept[n.id]
		case c.UniqueNames() && !strings.HasSuffix(*n.name, "-"+short):
			*n.name += "-" + short
		}
		if len(*n.name) > maxName {
			errs = append(errs, fmt.Errorf("%s.name %q is longer than %d characters (%s)", n.key, *n.name, maxName, fixTooLongForRunSuffix))
		}
	}
	return errors.Join(errs...)
}
