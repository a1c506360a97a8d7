package vsphere

import (
	"crypto/sha256"
	"testing"
	"time"
)

// burn uses about d of CPU on this goroutine.
func burn(d time.Duration) {
	buf := make([]byte, 64<<10)
	for start := processCPU(); processCPU()-start < d; {
		sha256.Sum256(buf)
	}
}

// CPU goes to the reads that moved bytes while it was spent, in proportion.
func TestCPUIsSharedByBytesMoved(t *testing.T) {
	m := &cpuMeter{}
	busy, idle := m.start(), m.start()
	busy.add(3 << 20)
	burn(60 * time.Millisecond)
	idleCPU := m.stop(idle)
	if idleCPU != 0 {
		t.Errorf("a read that moved no bytes got %s of CPU", idleCPU)
	}
	busy.add(1 << 20)
	burn(20 * time.Millisecond)
	if got := m.stop(busy); got < 70*time.Millisecond {
		t.Errorf("the only read that moved bytes got %s, want about the 80ms burnt", got)
	}
	if again := m.stop(busy); again != busy.cpu {
		t.Errorf("a second stop changed the account: %s", again)
	}
}

func TestCPUOfReadsWithoutBytesIsSplitEvenly(t *testing.T) {
	m := &cpuMeter{}
	a, b := m.start(), m.start()
	burn(40 * time.Millisecond)
	ca := m.stop(a)
	cb := m.stop(b)
	if ca < 15*time.Millisecond || cb < 15*time.Millisecond || ca+cb > 60*time.Millisecond {
		t.Errorf("a got %s, b %s; want about half of the 40ms each", ca, cb)
	}
}
