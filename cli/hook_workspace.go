package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/engine/config"
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
		if sd, err := ledgerloc.StateDir(d); err == nil {
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
