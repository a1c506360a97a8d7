package vsphere

import (
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The OVA stage is CPU-bound on small machines (hashing and TLS), so each
// OVA reports the client CPU its bytes cost. Go cannot tell which goroutine
// burned which CPU, and the bytes of one OVA are hashed and encrypted in the
// HTTP transport's goroutines anyway, so the process's CPU time is shared out
// among the OVA reads running at that moment, in proportion to the bytes each
// moved. With one OVA at a time that is the process's CPU while it streamed.
type cpuMeter struct {
	mu     sync.Mutex
	last   time.Duration
	active map[*cpuShare]struct{}
}

// cpuShare is one OVA read's account.
type cpuShare struct {
	bytes   atomic.Int64
	settled int64
	cpu     time.Duration
}

// meter is per process: imports of separate ImportOVAs calls share the CPU too.
var meter = &cpuMeter{}

func (s *cpuShare) add(n int) { s.bytes.Add(int64(n)) }

func (m *cpuMeter) start() *cpuShare {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.settleLocked()
	if m.active == nil {
		m.active = map[*cpuShare]struct{}{}
	}
	s := &cpuShare{}
	m.active[s] = struct{}{}
	return s
}

// stop ends the account and returns the CPU time it was given; calling it
// again returns the same.
func (m *cpuMeter) stop(s *cpuShare) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.active[s]; ok {
		m.settleLocked()
		delete(m.active, s)
	}
	return s.cpu
}

// settleLocked hands the CPU used since the last settle to the active
// accounts; CPU used while none is active belongs to no OVA.
func (m *cpuMeter) settleLocked() {
	now := processCPU()
	spent := now - m.last
	m.last = now
	if len(m.active) == 0 || spent <= 0 {
		for s := range m.active {
			s.settled = s.bytes.Load()
		}
		return
	}
	moved := map[*cpuShare]int64{}
	var total int64
	for s := range m.active {
		b := s.bytes.Load()
		moved[s] = b - s.settled
		total += moved[s]
		s.settled = b
	}
	for s := range m.active {
		if total == 0 {
			s.cpu += spent / time.Duration(len(m.active))
			continue
		}
		s.cpu += time.Duration(float64(spent) * float64(moved[s]) / float64(total))
	}
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// perGiB is seconds of CPU per GiB of n bytes (0 for no bytes).
func perGiB(cpu time.Duration, n int64) float64 {
	if n <= 0 {
		return 0
	}
	return cpu.Seconds() / (float64(n) / (1 << 30))
}
