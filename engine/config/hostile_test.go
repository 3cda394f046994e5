package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/opx-dev/opx/engine/config"
	"github.com/opx-dev/opx/internal/hostile"
	"github.com/opx-dev/opx/internal/regularfile"
)

// TestLoad_HostileFiles: every hostile config.yaml is refused with an
// error (or, for a prefix of the template that is itself valid YAML,
// read), in bounded memory; special files are refused before a read.
func TestLoad_HostileFiles(t *testing.T) {
	const bound = 64 << 20 // heap allocated for one Load of a file of at most MaxBytes
	for _, c := range hostile.Contents([]byte(config.Template), config.MaxBytes) {
		t.Run(c.Name, func(t *testing.T) {
			ws := workspaceWith(t, c.Data)
			var err error
			n := hostile.Allocated(func() { _, err = config.Load(ws) })
			if n > bound {
				t.Errorf("allocated %d bytes, bound %d", n, bound)
			}
			if err != nil && !errors.Is(err, config.ErrInvalid) && !errors.Is(err, regularfile.ErrTooLarge) {
				t.Errorf("error %v is neither ErrInvalid nor ErrTooLarge", err)
			}
			if c.Name == "one byte over the bound" && !errors.Is(err, regularfile.ErrTooLarge) {
				t.Errorf("error %v, want ErrTooLarge", err)
			}
		})
	}
	for name, path := range hostile.Special(t) {
		t.Run(name, func(t *testing.T) {
			ws := t.TempDir()
			if err := os.Mkdir(filepath.Join(ws, config.Dir), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(path, config.PathIn(ws)); err != nil {
				t.Fatal(err)
			}
			if _, err := config.Load(ws); !errors.Is(err, regularfile.ErrNotRegular) {
				t.Errorf("error %v, want ErrNotRegular", err)
			}
		})
	}
}

// workspaceWith makes a workspace whose config.yaml holds data.
func workspaceWith(t *testing.T, data []byte) string {
	t.Helper()
	ws := t.TempDir()
	if err := os.Mkdir(filepath.Join(ws, config.Dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(config.PathIn(ws), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return ws
}
