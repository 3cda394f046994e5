package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/engine/config"
	"github.com/urfave/cli/v2"
)

func initCommand() *cli.Command {
	return &cli.Command{
		Name:      "init",
		Usage:     "write a commented .opx/config.yaml in the workspace",
		UsageText: "opx init [--workspace DIR] [--force]",
		Description: "Writes the workspace's configuration with every setting, its default and what it does. The\n" +
			"ledger does not live here but in the state directory ($XDG_STATE_HOME/opx/<workspace-id>/),\n" +
			"outside anything the agent could be allowed to touch. An existing file is kept unless --force.\n\n" +
			exitCodesHelp(""),
		Flags: append(ledgerloc.WorkspaceFlags(),
			&cli.BoolFlag{Name: "force", Usage: "overwrite an existing config.yaml"},
		),
		Action: runInit,
	}
}

func runInit(c *cli.Context) error {
	if _, err := wantArgs(c, 0, 0, ""); err != nil {
		return err
	}
	ws, err := ledgerloc.WorkspaceDir(c)
	if err != nil {
		return err
	}
	path := config.PathIn(ws)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if c.Bool("force") {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%s exists; edit it, or run opx init --force to start over", path)
	}
	if err != nil {
		return err
	}
	if _, err := f.WriteString(config.Template); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	dir, err := ledgerloc.StateDir(ws)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "wrote %s\nthe ledger will be %s\nnext: opx start --workspace %s\n", path, filepath.Join(string(dir), "ledger.db"), ws)
	return nil
}
