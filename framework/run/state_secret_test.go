package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tkg-e2e/harness/framework/redact"
)

func TestStateFileIsPrivateAndMasked(t *testing.T) {
	const secret = `vc-Pa55&w"rd\x`
	dir, s := newState(t)
	must(t, s.SetRedactor(redact.New(secret).String))
	must(t, s.StartStage("ova"))
	must(t, s.EndStage("ova", StatusFailed, "login failed: ServerFaultCode: Cannot complete login for password "+secret))
	must(t, s.SetCleanup("failed: "+secret))

	fi, err := os.Stat(filepath.Join(dir, StateFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("state.json mode %v, want 0600", fi.Mode().Perm())
	}
	b, err := os.ReadFile(filepath.Join(dir, StateFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "vc-Pa55") || !strings.Contains(string(b), "redacted") {
		t.Errorf("secret stored in state.json:\n%s", b)
	}
	back, err := Load(dir)
	if err != nil {
		t.Fatalf("masked state file does not load: %v", err)
	}
	if rec, _ := back.Stage("ova"); rec.Status != StatusFailed || !strings.Contains(rec.Message, redact.Mask) {
		t.Errorf("stage record after load: %+v", rec)
	}
}
