package vsphere

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// lineWriter writes whole lines under a lock, so that the progress of OVAs
// imported side by side never interleaves within a line.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) printf(format string, args ...any) {
	if l == nil || l.w == nil {
		return
	}
	line := fmt.Sprintf(format, args...)
	if !strings.HasSuffix(line, "\n") {
		line += "\n"
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = io.WriteString(l.w, line)
}

// reporter prints the progress of one OVA: a line per phase, and while bytes
// move a line every `every` with bytes done, rate and ETA, e.g.
//
//	[ova] node-a: uploading node-a-disk1.vmdk 120.0 MiB / 200.0 MiB (60%), 310.2 MiB/s, ETA 0s
type reporter struct {
	out    *lineWriter
	prefix string
	name   string
	every  time.Duration
	start  time.Time
}

func (r *reporter) printf(format string, args ...any) {
	p := r.prefix
	if p != "" {
		p += " "
	}
	r.out.printf("%s%s: %s", p, r.name, fmt.Sprintf(format, args...))
}

// transfer tracks bytes of one phase (download or upload) and reports them
// until stopped.
type transfer struct {
	r     *reporter
	verb  string
	what  string
	total int64
	done  atomic.Int64
	start time.Time
	stop  chan struct{}
	wg    sync.WaitGroup
}

func (r *reporter) transfer(verb, what string, total int64) *transfer {
	t := &transfer{r: r, verb: verb, what: what, total: total, start: time.Now(), stop: make(chan struct{})}
	if r.every > 0 {
		t.wg.Add(1)
		go t.loop()
	}
	return t
}

func (t *transfer) add(n int) { t.done.Add(int64(n)) }

func (t *transfer) loop() {
	defer t.wg.Done()
	tick := time.NewTicker(t.r.every)
	defer tick.Stop()
	for {
		select {
		case <-t.stop:
			return
		case <-tick.C:
			t.r.printf("%s", t.line())
		}
	}
}

func (t *transfer) line() string {
	done := t.done.Load()
	elapsed := time.Since(t.start)
	rate := float64(done) / elapsed.Seconds()
	s := fmt.Sprintf("%s %s %s", t.verb, t.what, mib(done))
	if t.total > 0 {
		s += fmt.Sprintf(" / %s (%.0f%%)", mib(t.total), 100*float64(done)/float64(t.total))
	}
	s += fmt.Sprintf(", %s/s", mib(int64(rate)))
	if t.total > 0 && rate > 0 {
		eta := time.Duration(float64(t.total-done) / rate * float64(time.Second))
		s += fmt.Sprintf(", ETA %s", eta.Round(time.Second))
	}
	return s
}

// finish stops the ticker and returns bytes moved, the average rate text and
// how long the transfer took.
func (t *transfer) finish() (int64, string, time.Duration) {
	close(t.stop)
	t.wg.Wait()
	done := t.done.Load()
	took := time.Since(t.start)
	return done, fmt.Sprintf("%s in %s, %s/s", mib(done), took.Round(10*time.Millisecond),
		mib(int64(float64(done)/took.Seconds()))), took
}

func mib(n int64) string {
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
