package config

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"time"
)

// varName is a variable name as ${NAME} references write it.
var varName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Lease defaults: Kubernetes' CI reapers reset a busy resource after 15
// minutes without a heartbeat; a beat every 30s leaves room for many misses.
const (
	defaultLeaseAcquireTimeout = "30m"
	defaultLeaseAcquirePoll    = "10s"
	defaultLeaseHeartbeat      = "30s"
	defaultLeaseType           = "vsphere-testbed"
)

func (l *Lease) defaults() {
	if l == nil {
		return
	}
	if l.Type == "" {
		l.Type = defaultLeaseType
	}
	if l.AcquireTimeout == "" {
		l.AcquireTimeout = defaultLeaseAcquireTimeout
	}
	if l.AcquirePoll == "" {
		l.AcquirePoll = defaultLeaseAcquirePoll
	}
	if l.Heartbeat == "" {
		l.Heartbeat = defaultLeaseHeartbeat
	}
}

func (l *Lease) validate(add func(key, msg, fix string)) {
	if l == nil {
		return
	}
	if u, err := url.Parse(l.URL); l.URL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		add("lease.url", fmt.Sprintf("%q is not a Boskos URL", l.URL), "set lease.url (or BOSKOS_URL with make e2e LEASE=<url>) to the server's http(s)://host:port")
	}
	checkPositiveDuration(add, "lease.acquireTimeout", l.AcquireTimeout, "30m")
	checkPositiveDuration(add, "lease.acquirePoll", l.AcquirePoll, "10s")
	checkPositiveDuration(add, "lease.heartbeat", l.Heartbeat, "30s")
	for i, k := range l.SecretKeys {
		if !varName.MatchString(k) {
			add(fmt.Sprintf("lease.secretKeys[%d]", i), fmt.Sprintf("%q is not a variable name", k), "list user data keys such as VSPHERE_PASSWORD")
		}
	}
}

// AcquireTimeoutDuration, AcquirePollDuration and HeartbeatDuration parse
// the validated durations.
func (l *Lease) AcquireTimeoutDuration() time.Duration { return mustDuration(l.AcquireTimeout) }
func (l *Lease) AcquirePollDuration() time.Duration    { return mustDuration(l.AcquirePoll) }
func (l *Lease) HeartbeatDuration() time.Duration      { return mustDuration(l.Heartbeat) }

// LeaseValues splits a leased resource's user data into the variables the
// run uses (every well-formed name, and the secret-named ones only when
// secretKeys lists them), the names of the secret ones among them (for the
// redactor and the state file), and the keys it ignored with the reason,
// sorted.
func (l *Lease) LeaseValues(userData map[string]string) (vars map[string]string, secretKeys []string, ignored []string) {
	vars = map[string]string{}
	keys := make([]string, 0, len(userData))
	for k := range userData {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := userData[k]
		switch {
		case !varName.MatchString(k):
			// Boskos's own keys and the harness's notes (tkg-e2e-dirty-reason).
			continue
		case slices.Contains(l.SecretKeys, k):
			vars[k] = v
			secretKeys = append(secretKeys, k)
		case secretVariable(k):
			ignored = append(ignored, k+" (a secret: lease.secretKeys does not list it)")
		default:
			vars[k] = v
		}
	}
	return vars, secretKeys, ignored
}
