package cli

import (
	"fmt"

	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/ledger"
	"github.com/urfave/cli/v2"
)

func ledgerHeadCommand() *cli.Command {
	return &cli.Command{
		Name:  "head",
		Usage: "print the ledger id and the head (last entry's seq and hash)",
		Description: "Prints the head as the ledger records it; it does not verify the chain (use verify).\n" +
			"While an engine holds the ledger, prints the engine's durable head (what it has fsynced).\n\n" +
			exitCodesHelp("integrity failure found: the stored head does not match the last entry"),
		HideHelpCommand: true,
		Flags:           append(ledgerloc.Flags(), ui.JSONFlag()),
		Action:          runLedgerHead,
	}
}

// headResult is the --json output of head.
type headResult struct {
	ledger.Head
	Path string `json:"path"`
}

func runLedgerHead(c *cli.Context) error {
	if _, err := wantArgs(c, 0, 0, ""); err != nil {
		return err
	}
	rv, err := openReviewOrEngine(c)
	if err != nil {
		return err
	}
	defer rv.Close()
	var h ledger.Head
	if rv.local != nil {
		h, err = rv.local.Head()
	} else {
		h, err = rv.remote.Head()
	}
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return ui.WriteJSON(c, headResult{Head: h, Path: rv.path})
	}
	fmt.Fprintf(c.App.Writer, "ledger_id  %s\nhead_seq   %d\nhead_hash  %s\npath       %s\n", h.LedgerID, h.Seq, h.Hash, rv.path)
	return nil
}
