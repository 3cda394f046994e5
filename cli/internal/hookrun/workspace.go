package hookrun

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/opx-dev/opx/engine/config"
	"github.com/opx-dev/opx/engine/registry"
	"github.com/opx-dev/opx/ledger"
)

// findWorkspace is the opx workspace that holds dir (absolute): the
// nearest directory at or above it, symlinks resolved, that holds a .opx
// directory (opx init) or whose ledger exists in the state directory (an
// engine ran there). A hook never starts an engine for a directory no
// one made a workspace: the agent may run anywhere.
func findWorkspace(dir string) (string, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("the agent's directory: %w", err)
	}
	for d := real; ; {
		if fi, err := os.Stat(filepath.Join(d, config.Dir)); err == nil && fi.IsDir() {
			return d, nil
		}
		if sd, err := stateDir(d); err == nil {
			if fi, err := os.Stat(filepath.Join(string(sd), "ledger.db")); err == nil && fi.Mode().IsRegular() {
				return d, nil
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	return "", fmt.Errorf("%s is in no opx workspace (no %s directory at or above it, and no ledger for any of them): "+
		"run opx init in the project, or give the hook --workspace DIR", real, config.Dir)
}

// workspaceDir is the workspace --workspace names: absolute, symlinks
// resolved, a directory (as ledgerloc.WorkspaceDir, which imports
// urfave/cli).
func workspaceDir(ws string) (string, error) {
	abs, err := filepath.Abs(ws)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", workspaceErr(abs, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", workspaceErr(real, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("workspace %s is not a directory", real)
	}
	return real, nil
}

// workspaceErr says in words why workspace ws cannot be used, still
// wrapping err.
func workspaceErr(ws string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("workspace %s does not exist: name an existing directory with --workspace: %w", ws, err)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("workspace %s cannot be read: permission denied: %w", ws, err)
	}
	return fmt.Errorf("workspace %s: %w", ws, err)
}

// stateDir is where a workspace's ledger, registry entry and client
// token live: the directory of its default ledger path (as
// ledgerloc.StateDir).
func stateDir(ws string) (registry.Dir, error) {
	d, err := ledger.StateDir(ws)
	return registry.Dir(d), err
}
