package ledgerloc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/opx-dev/opx/engine/registry"
	"github.com/opx-dev/opx/ledger"
	"github.com/urfave/cli/v2"
)

// WorkspaceDir resolves --workspace (default: the current directory) to an
// absolute, symlink-free directory.
func WorkspaceDir(c *cli.Context) (string, error) {
	ws, ok := usage.FlagGiven(c, "workspace")
	if !ok || ws == "" {
		ws = "."
	}
	abs, err := filepath.Abs(ws)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", WorkspaceErr(abs, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", WorkspaceErr(real, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("workspace %s is not a directory", real)
	}
	return real, nil
}

// WorkspaceErr says in words why workspace ws cannot be used, rather than
// as the syscall that found it ("lstat …: no such file or directory"),
// still wrapping err.
func WorkspaceErr(ws string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &usage.Explained{Err: err, Msg: fmt.Sprintf("workspace %s does not exist: name an existing directory with --workspace "+
			"(the default is the current directory)", ws)}
	case errors.Is(err, fs.ErrPermission):
		return &usage.Explained{Err: err, Msg: fmt.Sprintf("workspace %s cannot be read: permission denied", ws)}
	}
	return fmt.Errorf("workspace %s: %w", ws, err)
}

// StateDir is where a workspace's ledger, registry entry and client token
// live: the directory of its default ledger path.
func StateDir(workspace string) (registry.Dir, error) {
	d, err := ledger.StateDir(workspace)
	return registry.Dir(d), err
}
