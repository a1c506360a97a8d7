package artifacts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tkg-e2e/harness/framework/redact"
)

// DefaultMaxFileSize is the cap to use when the profile could not be read (a
// run that failed while loading its config still writes its reports).
const DefaultMaxFileSize int64 = 10 << 20

// Artifacts are private to the user who runs the suite: they quote logs and
// objects that may hold what the redactor does not know to be secret.
const (
	DirMode  os.FileMode = 0o700
	FileMode os.FileMode = 0o600
)

// Options configure a Writer.
type Options struct {
	// Root is the run's artifacts folder; it is created if missing.
	Root string
	// MaxFileSize caps one file in bytes (config artifacts.maxFileSize). A cut
	// file ends with a note that says how much was dropped.
	MaxFileSize int64
	// Secrets are values masked wherever they appear (the vCenter password,
	// tokens from the environment), also in base64 and escaped forms.
	Secrets []string
	// Redactor is shared with the suite's stdout when set; Secrets are added
	// to it. Nil makes a new one.
	Redactor *redact.Redactor
}

// Writer is how a collector must put files in the artifacts folder: a file
// written around it is neither redacted nor capped, nor listed in index.json.
// It is safe for concurrent use.
type Writer struct {
	root string
	max  int64
	red  *redact.Redactor

	mu    sync.Mutex
	files map[string]FileRecord
	items []ItemRecord
	times []ItemTiming
}

// ItemTiming is how long one collection item took, kept for every item so
// that a collection over its time budget shows where the time went.
type ItemTiming struct {
	Item    string  `json:"item"`
	Seconds float64 `json:"seconds"`
}

// FileRecord is one written file, as index.json lists it.
type FileRecord struct {
	Path string `json:"path"`
	// Bytes on disk.
	Bytes int64 `json:"bytes"`
	// Dropped is how many bytes the size cap removed (0 when the file is whole).
	Dropped int64 `json:"dropped,omitempty"`
}

// Item outcomes recorded in errors.txt.
const (
	OutcomeFailed   = "failed"
	OutcomeTimedOut = "timed out"
	// OutcomeSkipped is for what was not collected by design or for lack of
	// configuration (no SSH key); it is listed so that absence is explained.
	OutcomeSkipped = "not collected"
)

// ItemRecord is one collection item that did not fully succeed.
type ItemRecord struct {
	Item    string  `json:"item"`
	Outcome string  `json:"outcome"`
	Message string  `json:"message"`
	Seconds float64 `json:"seconds,omitempty"`
}

// New checks the options and creates the folder.
func New(opts Options) (*Writer, error) {
	if opts.Root == "" {
		return nil, errors.New("artifacts: Options.Root is empty (set ARTIFACTS or the run's artifacts folder)")
	}
	if opts.MaxFileSize <= 0 {
		return nil, fmt.Errorf("artifacts: Options.MaxFileSize is %d; set artifacts.maxFileSize in the profile (e.g. 10Mi) or pass artifacts.DefaultMaxFileSize", opts.MaxFileSize)
	}
	root, err := filepath.Abs(opts.Root)
	if err != nil {
		return nil, fmt.Errorf("artifacts: root %q: %w", opts.Root, err)
	}
	if err := os.MkdirAll(root, DirMode); err != nil {
		return nil, fmt.Errorf("artifacts: cannot create %s: %w", root, err)
	}
	// A folder an earlier run or a script created keeps its mode otherwise.
	if err := os.Chmod(root, DirMode); err != nil {
		return nil, fmt.Errorf("artifacts: cannot make %s private: %w", root, err)
	}
	red := opts.Redactor
	if red == nil {
		red = redact.New()
	}
	red.Add(opts.Secrets...)
	return &Writer{root: root, max: opts.MaxFileSize, red: red, files: map[string]FileRecord{}}, nil
}

// Root is the absolute artifacts folder.
func (w *Writer) Root() string { return w.root }

// MaxFileSize is the per-file cap in bytes.
func (w *Writer) MaxFileSize() int64 { return w.max }

// Redactor is the redactor every file goes through; wrap anything that
// prints with its Writer, so output is masked by the same rules as files.
func (w *Writer) Redactor() *redact.Redactor { return w.red }

// AddSecrets registers more values to mask from now on (a token read late).
func (w *Writer) AddSecrets(values ...string) { w.red.Add(values...) }

// Redact masks secrets in s, for text that goes elsewhere than a file.
func (w *Writer) Redact(s string) string { return w.red.String(s) }

// Path resolves rel inside the folder, refusing paths that leave it.
func (w *Writer) Path(rel string) (string, error) {
	clean := filepath.Clean(filepath.FromSlash(rel))
	if rel == "" || !filepath.IsLocal(clean) {
		return "", fmt.Errorf("artifacts: %q is not a relative path inside the artifacts folder", rel)
	}
	return filepath.Join(w.root, clean), nil
}

// Create opens a file that keeps its beginning when it exceeds the cap
// (dumps, reports: the start says what the object is).
func (w *Writer) Create(rel string) (*File, error) { return w.open(rel, keepHead) }

// CreateTail opens a file that keeps its end when it exceeds the cap (logs:
// the failure is at the end).
func (w *Writer) CreateTail(rel string) (*File, error) { return w.open(rel, keepTail) }

func (w *Writer) open(rel string, mode cutMode) (*File, error) {
	abs, err := w.Path(rel)
	if err != nil {
		return nil, err
	}
	return &File{w: w, rel: filepath.ToSlash(filepath.Clean(rel)), abs: abs, mode: mode}, nil
}

// WriteFile writes data as one file, keeping its beginning if capped.
func (w *Writer) WriteFile(rel string, data []byte) error {
	f, err := w.Create(rel)
	if err != nil {
		return err
	}
	_, _ = f.Write(data)
	return f.Close()
}

// WriteJSON writes v indented. HTML escaping is off so that masks read
// <redacted> rather than \u003credacted\u003e.
func (w *Writer) WriteJSON(rel string, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("artifacts: %s: %w", rel, err)
	}
	return w.WriteFile(rel, buf.Bytes())
}

// CopyFile copies a file written elsewhere (a clusterctl log, the placement
// matrix) into the folder through redaction, keeping its end if capped.
func (w *Writer) CopyFile(rel, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("artifacts: copy %s: %w", src, err)
	}
	defer in.Close()
	f, err := w.CreateTail(rel)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, in); err != nil {
		_ = f.Close()
		return fmt.Errorf("artifacts: copy %s: %w", src, err)
	}
	return f.Close()
}

// Fail records an item that could not be collected; the rest goes on.
func (w *Writer) Fail(item string, err error) {
	w.record(ItemRecord{Item: item, Outcome: OutcomeFailed, Message: fmt.Sprint(err)})
}

// Skip records an item that was not collected, and why (e.g. no SSH key).
func (w *Writer) Skip(item, reason string) {
	w.record(ItemRecord{Item: item, Outcome: OutcomeSkipped, Message: reason})
}

func (w *Writer) record(r ItemRecord) {
	r.Item = w.red.String(r.Item)
	r.Message = w.red.String(r.Message)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.items = append(w.items, r)
}

// Items returns the recorded items, in the order they were recorded.
func (w *Writer) Items() []ItemRecord {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]ItemRecord(nil), w.items...)
}

// Files returns the files written so far, sorted by path.
func (w *Writer) Files() []FileRecord {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]FileRecord, 0, len(w.files))
	for _, f := range w.files {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func (w *Writer) timed(t ItemTiming) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.times = append(w.times, t)
}

// Timings returns every item's duration, slowest first.
func (w *Writer) Timings() []ItemTiming {
	w.mu.Lock()
	out := append([]ItemTiming(nil), w.times...)
	w.mu.Unlock()
	sort.SliceStable(out, func(i, j int) bool { return out[i].Seconds > out[j].Seconds })
	return out
}

func (w *Writer) written(rec FileRecord) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.files[rec.Path] = rec
}

// Names of the files WriteIndex writes.
const (
	ErrorsFile = "errors.txt"
	IndexJSON  = "index.json"
)

// WriteIndex writes errors.txt (always, so an empty one says collection had
// no errors rather than that it did not run) and index.json (files, items
// that failed, and how long every item took).
func (w *Writer) WriteIndex() error {
	items := w.Items()
	var b strings.Builder
	failed, skipped := 0, 0
	for _, it := range items {
		if it.Outcome == OutcomeSkipped {
			skipped++
		} else {
			failed++
		}
	}
	fmt.Fprintf(&b, "# Collection errors: %d item(s) failed or timed out, %d not collected. Written %s.\n",
		failed, skipped, time.Now().UTC().Format(time.RFC3339))
	for _, want := range []bool{false, true} {
		for _, it := range items {
			if (it.Outcome == OutcomeSkipped) != want {
				continue
			}
			fmt.Fprintf(&b, "[%s] %s: %s", it.Outcome, it.Item, oneLine(it.Message))
			if it.Seconds > 0 {
				fmt.Fprintf(&b, " (after %.1fs)", it.Seconds)
			}
			b.WriteString("\n")
		}
	}
	if err := w.WriteFile(ErrorsFile, []byte(b.String())); err != nil {
		return err
	}
	return w.WriteJSON(IndexJSON, struct {
		Files   []FileRecord `json:"files"`
		Items   []ItemRecord `json:"items"`
		Timings []ItemTiming `json:"itemSeconds"`
	}{w.Files(), items, w.Timings()})
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// SafeName turns an object or container name into one path element.
func SafeName(s string) string {
	if s == "" || s == "." || s == ".." {
		return "_"
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}
