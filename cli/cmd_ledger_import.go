package cli

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/urfave/cli/v2"
)

func ledgerImportCommand() *cli.Command {
	return &cli.Command{
		Name:      "import",
		Usage:     "verify a full export and write it as a new ledger file",
		ArgsUsage: "FILE --ledger PATH",
		Description: "Reads FILE (.jsonl or .jsonl.zst) and its bundle FILE.blobs/, verifies all of it strictly, and\n" +
			"only then writes a new ledger at PATH, which must not exist. A broken export is refused with the\n" +
			"same report as verify, and nothing is written. A session segment cannot become a ledger.\n\n" +
			exitCodesHelp("integrity failure found: the export does not verify, nothing was written"),
		HideHelpCommand: true,
		Flags: []cli.Flag{
			// Not ledgerloc.Flags: the target is never derived from a
			// workspace or $OPX_LEDGER. A --ledger before the command
			// counts too.
			&cli.StringFlag{Name: "ledger", Usage: "the new ledger file `PATH` to write (required; must not exist)", TakesFile: true},
			ui.JSONFlag(),
		},
		Action: runLedgerImport,
	}
}

// importResult is the --json output of import: the verification report
// (the same object verify prints) plus where the ledger went.
type importResult struct {
	*ledger.Report
	Ledger   string `json:"ledger"`
	Imported bool   `json:"imported"`
}

func runLedgerImport(c *cli.Context) error {
	args, err := wantArgs(c, 1, 1, "FILE (the export to import)")
	if err != nil {
		return err
	}
	// Importing writes a ledger, so the caller names the file.
	dst, ok := usage.FlagGiven(c, "ledger")
	if !ok || dst == "" {
		return usage.Errorf(c, "missing --ledger PATH (the new ledger file to write)")
	}
	bar := ui.NewProgress(c, "import")
	verify := event.StrictOptions()
	verify.Progress = bar.Update
	// SIGINT or SIGTERM stops the import cleanly: the temporary ledger
	// file is removed and nothing is left at PATH. A second signal kills.
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	go func() { <-ctx.Done(); stop() }()
	rep, err := ledger.Import(args[0], dst, ledger.ImportOptions{Verify: verify, Context: ctx})
	stop()
	bar.Finish()
	if rep == nil || (err != nil && !errors.Is(err, ledger.ErrIntegrity)) {
		// No report, or a refusal that is not about integrity (target
		// exists, a segment, unreadable file): the error says it all.
		return err
	}
	if c.Bool("json") {
		if jerr := ui.WriteJSON(c, importResult{Report: jsonReport(rep), Ledger: dst, Imported: err == nil}); jerr != nil {
			return jerr
		}
	} else if err != nil {
		printReport(c.App.Writer, rep)
	} else {
		fmt.Fprintf(c.App.Writer, "imported %s into %s: %s, head %d %s\n",
			args[0], dst, ui.Plural(rep.Entries, "entry", "entries"), rep.HeadSeq, rep.HeadHash)
	}
	if err != nil {
		return fmt.Errorf("%w; nothing was written to %s", err, dst)
	}
	// The projections, folded from the imported entries now, so the
	// ledger reads like one an engine wrote.
	l, err := ledger.Open(dst, writeOptions())
	if err != nil {
		return fmt.Errorf("build the projections of %s: %w", dst, err)
	}
	return l.Close()
}
