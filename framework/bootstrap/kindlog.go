package bootstrap

import (
	"fmt"

	kindlog "sigs.k8s.io/kind/pkg/log"
)

// kindLogger sends kind's status lines ("Preparing nodes", "Starting
// control-plane") to the progress writer; kind's debug levels are dropped.
type kindLogger struct{ p progress }

func (l kindLogger) Warn(m string)                        { l.p.printf("kind: WARNING: %s", m) }
func (l kindLogger) Warnf(f string, a ...any)             { l.p.printf("kind: WARNING: "+f, a...) }
func (l kindLogger) Error(m string)                       { l.p.printf("kind: ERROR: %s", m) }
func (l kindLogger) Errorf(f string, a ...any)            { l.p.printf("kind: ERROR: "+f, a...) }
func (l kindLogger) V(v kindlog.Level) kindlog.InfoLogger { return kindInfo{p: l.p, on: v <= 0} }

type kindInfo struct {
	p  progress
	on bool
}

func (i kindInfo) Info(m string) {
	if i.on && m != "" {
		i.p.printf("kind: %s", m)
	}
}

func (i kindInfo) Infof(f string, a ...any) {
	if i.on {
		i.Info(fmt.Sprintf(f, a...))
	}
}

func (i kindInfo) Enabled() bool { return i.on }
