package cli

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestDemo_CommandName: the demo's hints name opx as the user can run it:
// "opx" only when PATH finds this very binary; the binary's path when it
// stays (a build elsewhere); "go run ./cli/opx" for the binary go run
// built in a temporary directory, which is gone when go run exits.
func TestDemo_CommandName(t *testing.T) {
	dir := t.TempDir()
	installed := filepath.Join(dir, "bin", "opx")
	other := filepath.Join(dir, "elsewhere", "opx")
	goBuild := filepath.Join(dir, "go-build1234", "b001", "exe", "opx")
	for _, p := range []string{installed, other, goBuild} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "bin", "opx-link")
	os.Symlink(installed, link)
	found := func(p string) func(string) (string, error) {
		return func(string) (string, error) { return p, nil }
	}
	notFound := func(string) (string, error) { return "", errors.New("not found") }
	tests := []struct {
		name, exe string
		look      func(string) (string, error)
		want      string
	}{
		{"installed, on PATH", installed, found(installed), "opx"},
		{"on PATH through a link", installed, found(link), "opx"},
		{"another opx on PATH", other, found(installed), other},
		{"not on PATH", other, notFound, other},
		{"go run", goBuild, notFound, goRunOpx},
		{"go run, an older opx on PATH", goBuild, found(installed), goRunOpx},
		{"executable unknown", "", found(installed), goRunOpx},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := commandName(tt.exe, tt.look); got != tt.want {
				t.Errorf("commandName(%q) = %q, want %q", tt.exe, got, tt.want)
			}
		})
	}
}
