package cli

import (
	"fmt"

	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/urfave/cli/v2"
)

func restartCommand() *cli.Command {
	return &cli.Command{
		Name:        "restart",
		Usage:       "restart the workspace's engine (its manager respawns it at once)",
		UsageText:   "opx restart [--workspace DIR]",
		Description: "The engine exits with 75, which its manager treats as a restart, not a crash.\n\n" + exitCodesHelp(""),
		Flags:       ledgerloc.WorkspaceFlags(),
		Action: func(c *cli.Context) error {
			if _, err := wantArgs(c, 0, 0, ""); err != nil {
				return err
			}
			ec, err := dialEngine(c)
			if err != nil {
				return err
			}
			defer ec.Close()
			if _, err := ec.client.Restart(ec.ctx, &opxv1.RestartRequest{Reason: "opx restart"}); err != nil {
				return fmt.Errorf("restart: %w", err)
			}
			fmt.Fprintln(c.App.Writer, "opx: restart requested")
			return nil
		},
	}
}
