package kind

import (
	"fmt"

	kindlog "sigs.k8s.io/kind/pkg/log"

	"github.com/tkg-e2e/harness/framework/wait"
)

// kindLogger sends kind's status lines ("Preparing nodes", "Starting
// control-plane") to the progress writer; kind's debug levels are dropped.
type kindLogger struct{ p wait.Printer }

func (l kindLogger) Warn(m string)                        { l.p.Printf("kind: WARNING: %s", m) }
func (l kindLogger) Warnf(f string, a ...any)             { l.p.Printf("kind: WARNING: "+f, a...) }
func (l kindLogger) Error(m string)                       { l.p.Printf("kind: ERROR: %s", m) }
func (l kindLogger) Errorf(f string, a ...any)            { l.p.Printf("kind: ERROR: "+f, a...) }
func (l kindLogger) V(v kindlog.Level) kindlog.InfoLogger { return kindInfo{p: l.p, on: v <= 0} }

type kindInfo struct {
	p  wait.Printer
	on bool
}

func (i kindInfo) Info(m string) {
	if i.on && m != "" {
		i.p.Printf("kind: %s", m)
	}
}

func (i kindInfo) Infof(f string, a ...any) {
	if i.on {
		i.Info(fmt.Sprintf(f, a...))
	}
}

func (i kindInfo) Enabled() bool { return i.on }
