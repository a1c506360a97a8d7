package artifacts

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

type cutMode int

const (
	keepHead cutMode = iota
	keepTail
)

// redactMargin is kept beyond the cap before redacting, so that a Secret cut
// by the cap is still recognised: its kind line comes after its data in a
// sorted dump, and would otherwise fall on the dropped side.
const redactMargin int64 = 256 << 10

// File is an artifact being written. It holds the content in memory and puts
// it on disk at Close, because redaction needs whole documents and the cap
// needs to know where the content ends. Writes after Close fail, so a
// collection item abandoned at its timeout cannot change a finished file.
type File struct {
	w    *Writer
	rel  string
	abs  string
	mode cutMode

	mu     sync.Mutex
	buf    []byte
	total  int64
	closed bool
}

// String names the file. Cluster API's docker exec formats its output writer
// into error messages; this keeps the content out of them.
func (f *File) String() string { return f.rel }

// Rel is the path inside the artifacts folder, with forward slashes.
func (f *File) Rel() string { return f.rel }

func (f *File) keep() int64 { return f.w.max + min(f.w.max, redactMargin) }

func (f *File) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return 0, fmt.Errorf("artifacts: write to %s after it was closed: %w", f.rel, os.ErrClosed)
	}
	f.total += int64(len(p))
	keep := f.keep()
	switch f.mode {
	case keepHead:
		if room := keep - int64(len(f.buf)); room > 0 {
			f.buf = append(f.buf, p[:min(room, int64(len(p)))]...)
		}
	case keepTail:
		f.buf = append(f.buf, p...)
		// Trim only now and then, so a stream of small writes stays linear.
		if int64(len(f.buf)) > 2*keep {
			f.buf = append([]byte(nil), f.buf[int64(len(f.buf))-keep:]...)
		}
	}
	return len(p), nil
}

// Close redacts, applies the cap and writes the file.
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	f.closed = true
	data := f.buf
	f.buf = nil
	if f.mode == keepTail && int64(len(data)) > f.keep() {
		data = data[int64(len(data))-f.keep():]
	}
	if f.mode == keepTail && int64(len(data)) < f.total {
		// The first line is partial; a partial line can hold half a secret.
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data = data[i+1:]
		}
	}
	out := encodeMasks(f.rel, f.w.red.Bytes(data))
	cut := int64(len(data)) < f.total
	if limit := f.w.max; int64(len(out)) > limit {
		cut = true
		if f.mode == keepHead {
			end := limit
			if i := bytes.LastIndexByte(out[:limit], '\n'); i > 0 {
				end = int64(i) + 1
			}
			out = out[:end]
		} else {
			start := int64(len(out)) - limit
			if i := bytes.IndexByte(out[start:], '\n'); i >= 0 && int64(i) < limit-1 {
				start += int64(i) + 1
			}
			out = out[start:]
		}
	}
	rec := FileRecord{Path: f.rel, Bytes: int64(len(out))}
	if cut {
		rec.Dropped = max(0, f.total-int64(len(out)))
		side := "beginning"
		if f.mode == keepTail {
			side = "end"
			out = append([]byte("[harness: the start of this file was dropped by the size cap; see the note at the end]\n"), out...)
		}
		if len(out) > 0 && out[len(out)-1] != '\n' {
			out = append(out, '\n')
		}
		out = append(out, fmt.Sprintf("[harness: file cut by the artifacts size cap of %s: kept its %s, %s of %s written were dropped]\n",
			HumanBytes(f.w.max), side, HumanBytes(rec.Dropped), HumanBytes(f.total))...)
		rec.Bytes = int64(len(out))
	}
	if err := os.MkdirAll(filepath.Dir(f.abs), DirMode); err != nil {
		return fmt.Errorf("artifacts: %w", err)
	}
	if err := os.WriteFile(f.abs, out, FileMode); err != nil {
		return fmt.Errorf("artifacts: %w", err)
	}
	// WriteFile keeps the mode of a file that exists (a resumed run).
	if err := os.Chmod(f.abs, FileMode); err != nil {
		return fmt.Errorf("artifacts: %w", err)
	}
	f.w.written(rec)
	return nil
}

// HumanBytes formats a size for notes and the index.
func HumanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
