package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/opx-dev/opx/engine/registry"
	"github.com/opx-dev/opx/ledger"
	"github.com/urfave/cli/v2"
)

// workspaceDir resolves --workspace (default: the current directory) to an
// absolute, symlink-free directory.
func workspaceDir(c *cli.Context) (string, error) {
	ws, ok := flagGiven(c, "workspace")
	if !ok || ws == "" {
		ws = "."
	}
	abs, err := filepath.Abs(ws)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("workspace %s is not a directory", real)
	}
	return real, nil
}

// stateDir is where a workspace's ledger, registry entry and client token
// live: the directory of its default ledger path.
func stateDir(workspace string) (registry.Dir, error) {
	id, err := ledger.WorkspaceID(workspace)
	if err != nil {
		return "", err
	}
	p, err := ledger.DefaultPath(id)
	if err != nil {
		return "", err
	}
	return registry.Dir(filepath.Dir(p)), nil
}
