package main_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/internal/gobuild"
	"github.com/opx-dev/opx/ledger/ledgertest"
)

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
	buildDir  string
)

func TestMain(m *testing.M) {
	if path := os.Getenv(envOpenProbe); path != "" {
		openProbe(path) // a child this test binary started in a sandbox
	}
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// buildOpx builds the opx binary once per test run. The tests also import
// package cli (for the exit codes), which makes go test's cache notice
// when the binary's source changes.
func buildOpx(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		if buildDir, buildErr = os.MkdirTemp("", "opx-bin-"); buildErr != nil {
			return
		}
		builtBin = filepath.Join(buildDir, "opx")
		buildErr = gobuild.Build("opx", ".", builtBin, ".")
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

var (
	buildHookOnce sync.Once
	builtHook     string
	buildHookErr  error
)

// buildHook builds the opx-hook binary once per test run, in a directory
// of its own beside a link to the built opx (as they are installed
// together: opx-hook starts an engine with the opx beside it). Not in
// opx's own directory: there, opx agents install would write opx-hook
// into the hooks of every other test.
func buildHook(t testing.TB) string {
	t.Helper()
	opx := buildOpx(t)
	buildHookOnce.Do(func() {
		dir := filepath.Join(filepath.Dir(opx), "hook")
		if buildHookErr = os.MkdirAll(dir, 0o755); buildHookErr != nil {
			return
		}
		if buildHookErr = os.Symlink(opx, filepath.Join(dir, "opx")); buildHookErr != nil {
			return
		}
		builtHook = filepath.Join(dir, "opx-hook")
		out, err := exec.Command("go", "build", "-o", builtHook, "../opx-hook").CombinedOutput()
		if err != nil {
			buildHookErr = fmt.Errorf("go build opx-hook: %v\n%s", err, out)
		}
	})
	if buildHookErr != nil {
		t.Fatal(buildHookErr)
	}
	return builtHook
}

// runOpx runs the built binary and returns its stdout, stderr and exit code.
func runOpx(t *testing.T, bin string, args ...string) (string, string, int) {
	t.Helper()
	return runOpxIn(t, bin, "", args...)
}

// runOpxIn is runOpx in directory dir ("" for the test's own).
func runOpxIn(t *testing.T, bin, dir string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "OPX_LEDGER=")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return out.String(), errOut.String(), 0
	case errors.As(err, &exit):
		return out.String(), errOut.String(), exit.ExitCode()
	default:
		t.Fatalf("run opx: %v", err)
		return "", "", -1
	}
}

func TestOpx_LedgerVerify(t *testing.T) {
	t.Parallel()
	bin := buildOpx(t)
	dir := t.TempDir()
	lg := ledgertest.New(t, filepath.Join(dir, "ledger.db"), 40)
	bad := ledgertest.Copy(t, lg.Path, filepath.Join(dir, "tampered.db"))
	ledgertest.FlipEntryByte(t, bad, 17)

	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"ok", []string{"ledger", "verify", "--ledger", lg.Path}, cli.ExitOK, "ok: 41 entries, head 40 " + lg.Head.Hash.String(), ""},
		{"tampered", []string{"ledger", "verify", "--ledger", bad}, cli.ExitIntegrity, "seq 18  hash-mismatch", "integrity failure"},
		{"missing", []string{"ledger", "verify", "--ledger", filepath.Join(dir, "nope.db")}, cli.ExitError, "", "no ledger at"},
		{"usage", []string{"ledger", "verify", "--nope"}, cli.ExitUsage, "", "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runOpx(t, bin, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout, stderr)
			}
			if !strings.Contains(stdout, tt.stdout) || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stdout %q, want %q; stderr %q, want %q", stdout, tt.stdout, stderr, tt.stderr)
			}
		})
	}
}
