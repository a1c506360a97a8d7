package config

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tkg-e2e/harness/framework/strictjson"
	"github.com/tkg-e2e/harness/framework/wait"
)

// Interval is a wait's timeout and poll period; an alias, so the suites
// hand it to the libraries as is.
type Interval = wait.Interval

// Interval returns "stage/key", or "default/key" when the stage has none,
// with its Grace from GraceKey.
func (c *Config) Interval(stage, key string) (Interval, error) {
	iv, ok, err := c.lookup(stage, key)
	if err != nil {
		return Interval{}, err
	}
	if !ok {
		return Interval{}, fmt.Errorf("no interval %s/%s nor default/%s in %s; add one under intervals:", stage, key, key, c.Source)
	}
	grace, ok, err := c.lookup(stage, GraceKey)
	switch {
	case err != nil:
		return Interval{}, err
	case ok:
		iv.Grace = grace.Timeout
	default:
		iv.Grace = wait.DefaultGrace
	}
	return iv, nil
}

// GraceKey is the interval every wait of a stage takes its Grace from
// (stage/stuck-grace, then default/stuck-grace, else wait.DefaultGrace):
// how long a state that cannot fix itself may last before the wait ends
// with it as the cause. One key, because what "cannot fix itself" means
// does not depend on what is waited for.
const GraceKey = "stuck-grace"

// lookup parses "stage/key", or "default/key" when the stage has none;
// false when neither is set.
func (c *Config) lookup(stage, key string) (Interval, bool, error) {
	for _, name := range []string{stage + "/" + key, "default/" + key} {
		if v, ok := c.Intervals[name]; ok {
			iv, err := parseInterval(v)
			if err != nil {
				return Interval{}, true, fmt.Errorf("interval %s: %w", name, err)
			}
			return iv, true, nil
		}
	}
	return Interval{}, false, nil
}

// MustInterval is Interval for callers whose config was validated against the
// stage registry (validation guarantees every registered key resolves); it
// panics otherwise, which is a key missing from its stage's Definition.
func (c *Config) MustInterval(stage, key string) Interval {
	iv, err := c.Interval(stage, key)
	if err != nil {
		panic(err)
	}
	return iv
}

func parseInterval(v []string) (Interval, error) {
	if len(v) == 0 || len(v) > 2 {
		return Interval{}, fmt.Errorf("want [timeout] or [timeout, poll], got %d values", len(v))
	}
	t, err := time.ParseDuration(v[0])
	if err != nil {
		return Interval{}, fmt.Errorf("timeout %q is not a duration", v[0])
	}
	if t <= 0 {
		return Interval{}, fmt.Errorf("timeout %q must be positive", v[0])
	}
	iv := Interval{Timeout: t, Poll: min(max(t/60, 250*time.Millisecond), 10*time.Second)}
	if len(v) == 2 {
		p, err := time.ParseDuration(v[1])
		if err != nil {
			return Interval{}, fmt.Errorf("poll %q is not a duration", v[1])
		}
		if p <= 0 || p > t {
			return Interval{}, fmt.Errorf("poll %q must be positive and not longer than the timeout %q", v[1], v[0])
		}
		iv.Poll = p
	}
	return iv, nil
}

func (c *Config) validateIntervals(idx nodeIndex) Problems {
	var probs Problems
	registry := c.intervalKeys
	if registry == nil {
		return Problems{idx.at("intervals").problem("intervals", "the caller gave no interval registry, so the intervals cannot be checked",
			"pass LoadOptions.Intervals (the stage registry's IntervalKeys)")}
	}
	known := map[string]bool{}
	for _, keys := range registry {
		for _, k := range keys {
			known[k] = true
		}
	}
	// A driver's keys are known to every profile (one profile can switch
	// drivers), and a scope accepts the keys any driver reads in it.
	scopeKeys := func(scope string) []string {
		keys := slices.Clone(registry[scope])
		for _, byScope := range c.driverIntervalKeys {
			keys = append(keys, byScope[scope]...)
		}
		return keys
	}
	for _, byScope := range c.driverIntervalKeys {
		for _, keys := range byScope {
			for _, k := range keys {
				known[k] = true
			}
		}
	}
	known[GraceKey] = true
	scopes := append([]string{"default"}, slices.Sorted(maps.Keys(registry))...)
	for _, name := range slices.Sorted(maps.Keys(c.Intervals)) {
		at := idx.at("intervals[" + name + "]")
		scope, key, ok := strings.Cut(name, "/")
		switch {
		case !ok:
			probs = append(probs, at.problem("intervals["+name+"]", "interval keys are written stage/key", "e.g. management/wait-nodes or default/wait-nodes"))
			continue
		case !slices.Contains(scopes, scope):
			probs = append(probs, at.problem("intervals["+name+"]", fmt.Sprintf("unknown scope %q", scope), "use one of: "+strings.Join(scopes, ", ")))
		case !known[key]:
			probs = append(probs, at.problem("intervals["+name+"]", fmt.Sprintf("unknown interval key %q%s%s", key, strictjson.Suggest(key, slices.Collect(maps.Keys(known))), c.unlinkedDrivers()),
				"known keys: "+strings.Join(slices.Sorted(maps.Keys(known)), ", ")))
		case scope != "default" && key != GraceKey && !slices.Contains(scopeKeys(scope), key):
			probs = append(probs, at.problem("intervals["+name+"]", fmt.Sprintf("stage %s does not use %q", scope, key), fmt.Sprintf("%s uses: %s", scope, strings.Join(scopeKeys(scope), ", "))))
		}
		if _, err := parseInterval(c.Intervals[name]); err != nil {
			probs = append(probs, at.problem("intervals["+name+"]", err.Error(), `write Go durations, e.g. ["10m", "10s"]`))
		}
	}
	var missing []string
	required := func(byScope map[string][]string) {
		for scope, keys := range byScope {
			for _, k := range keys {
				_, a := c.Intervals[scope+"/"+k]
				_, b := c.Intervals["default/"+k]
				if !a && !b && !slices.Contains(missing, scope+"/"+k) {
					missing = append(missing, scope+"/"+k)
				}
			}
		}
	}
	required(registry)
	var driverMissing []string
	if byScope := c.driverIntervalKeys[c.Driver]; len(byScope) > 0 {
		before := len(missing)
		required(byScope)
		driverMissing = missing[before:]
		missing = missing[:before]
	}
	sort.Strings(missing)
	sort.Strings(driverMissing)
	if len(missing) > 0 {
		probs = append(probs, idx.at("intervals").problem("intervals", "no interval for: "+strings.Join(missing, ", "),
			"add default/<key> (or stage/<key>) entries; config/local.yaml lists them all"))
	}
	if len(driverMissing) > 0 {
		probs = append(probs, idx.at("intervals").problem("intervals", fmt.Sprintf("driver: %s reads intervals the profile does not set: %s", c.Driver, strings.Join(driverMissing, ", ")),
			"add default/<key> (or stage/<key>) entries; config/local.yaml lists the tanzu driver's too"))
	}
	return probs
}

// unlinkedDrivers names the drivers whose provisioner the binary does not
// link, whose interval keys it cannot know: without it, a key only that
// driver reads reads as a typo.
func (c *Config) unlinkedDrivers() string {
	if c.driverIntervalKeys == nil {
		return ""
	}
	var out []string
	for _, d := range Drivers {
		if _, ok := c.driverIntervalKeys[d]; !ok {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		return ""
	}
	return fmt.Sprintf(" (the harness links no provisioner for driver %s, so it cannot know that driver's keys: add it in suites/lifecycle)", strings.Join(out, ", "))
}
