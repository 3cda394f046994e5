//go:build linux

package ui

import (
	"os"
	"path/filepath"
	"testing"
)

func TestIsTerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "plain")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Error("a regular file is not a terminal")
	}
	ptmx, err := os.OpenFile(filepath.Join("/dev", "ptmx"), os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal to test with: %v", err)
	}
	defer ptmx.Close()
	if !isTerminal(ptmx) {
		t.Error("a pseudo-terminal is a terminal")
	}
	t.Setenv("NO_COLOR", "")
	if got := Green(ptmx, "ok"); got != "\x1b[32mok\x1b[0m" {
		t.Errorf("green on a terminal = %q", got)
	}
	t.Setenv("NO_COLOR", "1")
	if got := Green(ptmx, "ok"); got != "ok" {
		t.Errorf("green with NO_COLOR = %q", got)
	}
	if got := Red(f, "FAILED"); got != "FAILED" {
		t.Errorf("red on a file = %q", got)
	}
}
