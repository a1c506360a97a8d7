// Package artifactstest has what the tests of the artifacts packages share: a
// Writer in a temporary folder, and reading back what it wrote.
package artifactstest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tkg-e2e/harness/framework/artifacts"
)

// NewWriter returns a Writer on a fresh temporary folder that masks secrets.
func NewWriter(t testing.TB, maxFileSize int64, secrets ...string) *artifacts.Writer {
	t.Helper()
	w, err := artifacts.New(artifacts.Options{Root: t.TempDir(), MaxFileSize: maxFileSize, Secrets: secrets})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// Read returns the file rel of w's folder, failing the test if it was not written.
func Read(t testing.TB, w *artifacts.Writer, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(w.Root(), rel))
	if err != nil {
		t.Fatalf("%s was not written: %v", rel, err)
	}
	return string(b)
}
