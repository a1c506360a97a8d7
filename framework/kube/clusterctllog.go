package kube

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	logf "sigs.k8s.io/cluster-api/cmd/clusterctl/log"
)

// LogEntry is one line of clusterctl's library log.
type LogEntry struct {
	Level int
	Msg   string
	// KV are the key/value pairs of the call, after those of WithValues.
	KV  []any
	Err error
}

// ClusterctlLog says where clusterctl's library log goes while a clusterctl
// call runs.
type ClusterctlLog struct {
	// Out receives entries up to Verbosity as "prefix msg key=value ...".
	Out       io.Writer
	Prefix    string
	Verbosity int
	// Observe, if set, sees every entry up to level 5 (clusterctl's most
	// detailed level), e.g. to read move's discovery counts.
	Observe func(LogEntry)
}

// clusterctl logs through a package-level logger (logf.Log), so calls that
// route it are serialized. The lock is a channel so that a caller waiting for
// it still honours its context.
var clusterctlLogSem = make(chan struct{}, 1)

// ClusterctlCall runs fn with clusterctl's library logger routed to l, and
// restores the previous logger afterwards. It returns as soon as ctx ends, even
// if clusterctl does not (some of its retries sleep without watching the
// context); the call then finishes in the background.
func ClusterctlCall(ctx context.Context, l ClusterctlLog, fn func(ctx context.Context) error) error {
	select {
	case clusterctlLogSem <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("interrupted: %w", context.Cause(ctx))
	}
	done := make(chan error, 1)
	go func() {
		defer func() { <-clusterctlLogSem }()
		prev := logf.Log
		logf.SetLogger(logr.New(&sink{cfg: l, mu: &sync.Mutex{}}))
		defer logf.SetLogger(prev)
		// clusterctl's clients log API warnings through controller-runtime's
		// log.FromContext; a logger in the context keeps controller-runtime
		// from dumping a "SetLogger was never called" stack on the first one.
		done <- fn(logr.NewContext(ctx, logr.Discard()))
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("interrupted: %w", context.Cause(ctx))
	}
}

type sink struct {
	cfg  ClusterctlLog
	mu   *sync.Mutex
	kv   []any
	name string
}

func (s *sink) Init(logr.RuntimeInfo) {}

func (s *sink) Enabled(level int) bool {
	return level <= s.cfg.Verbosity || (s.cfg.Observe != nil && level <= 5)
}

func (s *sink) Info(level int, msg string, kv ...any) { s.emit(level, msg, nil, kv) }

func (s *sink) Error(err error, msg string, kv ...any) { s.emit(0, msg, err, kv) }

func (s *sink) emit(level int, msg string, err error, kv []any) {
	all := append(append([]any{}, s.kv...), kv...)
	if s.cfg.Observe != nil {
		s.cfg.Observe(LogEntry{Level: level, Msg: msg, KV: all, Err: err})
	}
	if s.cfg.Out == nil || level > s.cfg.Verbosity {
		return
	}
	var b strings.Builder
	if s.cfg.Prefix != "" {
		b.WriteString(s.cfg.Prefix + " ")
	}
	b.WriteString("clusterctl: ")
	b.WriteString(msg)
	for i := 0; i+1 < len(all); i += 2 {
		fmt.Fprintf(&b, " %v=%v", all[i], all[i+1])
	}
	if err != nil {
		fmt.Fprintf(&b, " error=%v", err)
	}
	b.WriteByte('\n')
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _ = io.WriteString(s.cfg.Out, b.String())
}

func (s *sink) WithValues(kv ...any) logr.LogSink {
	n := *s
	n.kv = append(append([]any{}, s.kv...), kv...)
	return &n
}

func (s *sink) WithName(name string) logr.LogSink {
	n := *s
	n.name = name
	return &n
}
