package redact_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/tkg-e2e/harness/framework/artifacts/leakcheck"
	"github.com/tkg-e2e/harness/framework/redact"
)

const (
	stdioHelperEnv = "REDACT_STDIO_HELPER"
	lateSecret     = "added-after-the-redirect-77"
)

// stdioHelper runs in a child test process: it redirects its stdio, then
// writes the secret every way a suite does.
func stdioHelper() {
	r := redact.New(password)
	s, err := redact.RedirectStdio(r)
	if err != nil {
		fmt.Fprintln(os.Stderr, "redirect:", err)
		os.Exit(3)
	}
	fmt.Println("stdout: " + password)
	fmt.Fprintln(os.Stderr, "stderr: "+password)
	syscall.Write(2, []byte("raw fd 2: "+password+"\n")) // as klog or the runtime write
	cmd := exec.Command("sh", "-c", `printf 'child-out: %s\n' "$S"; printf 'child-err: %s\n' "$S" >&2`)
	cmd.Env = append(os.Environ(), "S="+password)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
	}
	r.Add(lateSecret)
	fmt.Println("late: " + lateSecret)
	fmt.Print("last partial line: " + password) // no newline: Restore must flush it
	if err := s.Restore(); err != nil {
		fmt.Fprintln(os.Stderr, "restore:", err)
		os.Exit(4)
	}
	fmt.Println()
	fmt.Println("restored")
	os.Exit(0)
}

func TestStdioOfTheProcessAndItsChildrenIsMasked(t *testing.T) {
	if os.Getenv(stdioHelperEnv) == "1" {
		stdioHelper()
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestStdioOfTheProcessAndItsChildrenIsMasked$")
	cmd.Env = append(os.Environ(), stdioHelperEnv+"=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("helper: %v\nstderr:\n%s", err, stderr.String())
	}
	m := redact.Mask
	for _, want := range []string{"stdout: " + m, "child-out: " + m, "late: " + m, "last partial line: " + m, "restored"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
		}
	}
	for _, want := range []string{"stderr: " + m, "raw fd 2: " + m, "child-err: " + m} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	for name, out := range map[string]string{"stdout": stdout.String(), "stderr": stderr.String()} {
		if found := leakcheck.Text(name, out, password, lateSecret); len(found) > 0 {
			t.Errorf("secret in %s: %v", name, found)
		}
	}
}

func TestOnlyOneRedirect(t *testing.T) {
	if os.Getenv(stdioHelperEnv) == "1" {
		t.Skip()
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestOnlyOneRedirect$", "-test.v")
	cmd.Env = append(os.Environ(), stdioHelperEnv+"=2")
	if os.Getenv(stdioHelperEnv) == "2" {
		s, err := redact.RedirectStdio(redact.New())
		if err != nil {
			t.Fatal(err)
		}
		defer s.Restore()
		if _, err := redact.RedirectStdio(redact.New()); err == nil {
			t.Fatal("a second redirect was accepted")
		}
		return
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}
