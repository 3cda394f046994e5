package cli

import (
	"fmt"

	"github.com/opx-dev/opx/ledger"
	"github.com/urfave/cli/v2"
)

func ledgerExportCommand() *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "write the ledger, or one session's segment, as JSONL with its blobs",
		UsageText: "opx ledger export -o FILE [--session ID] [--json] [--ledger PATH | --workspace DIR]",
		Description: "Writes one entry per line, the stored bytes verbatim (zstd-compressed when FILE ends in .zst),\n" +
			"and the blobs the entries name plus a manifest to the bundle NAME.blobs/ beside it. Nothing is\n" +
			"overwritten. The chain is checked while exporting: a damaged ledger is not exported.\n" +
			"With --session, the export is the contiguous segment from the session's first entry to its last,\n" +
			"including other sessions' entries in between (the chain runs through them); the manifest names\n" +
			"the hashes at both ends so the segment can be tied to the full ledger.\n" +
			"While an engine holds the ledger, export reads it through the engine up to its durable head when\n" +
			"export starts, checking every entry and blob here: the files are the same as an offline export of that head.\n\n" +
			exitCodesHelp("integrity failure found: the ledger is damaged, nothing was exported"),
		HideHelpCommand: true,
		Flags: append(locationFlags(),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "export `FILE` (.jsonl or .jsonl.zst; required)", TakesFile: true},
			&cli.StringFlag{Name: "session", Usage: "export only the segment covering session `ID`"},
			jsonFlag(),
		),
		Action: runLedgerExport,
	}
}

func runLedgerExport(c *cli.Context) error {
	if _, err := wantArgs(c, 0, 0, ""); err != nil {
		return err
	}
	out := c.String("output")
	if out == "" {
		return usagef(c, "missing -o FILE")
	}
	rv, err := openReviewOrEngine(c)
	if err != nil {
		return err
	}
	defer rv.Close()
	bar := newProgress(c, "export")
	opts := ledger.ExportOptions{Session: c.String("session"), Progress: bar.update}
	var m *ledger.Manifest
	if rv.local != nil {
		m, err = rv.local.ExportFile(out, opts)
	} else {
		// Through the engine, up to its durable head when export
		// starts: the same files an offline export of that head writes,
		// every entry and blob checked here.
		m, err = ledger.ExportSourceFile(rv.remote, out, opts)
	}
	bar.finish()
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return writeJSON(c, m)
	}
	w := c.App.Writer
	if m.Session != "" {
		fmt.Fprintf(w, "wrote %s: segment of session %q, entries %d..%d (%s)\n",
			out, m.Session, m.FromSeq, m.ToSeq, plural(m.Entries, "entry", "entries"))
		fmt.Fprintf(w, "  entries of other sessions inside that range are included: the chain runs through them\n")
		if m.FromSeq > 0 {
			fmt.Fprintf(w, "  prev (hash of entry %d): %s\n", m.FromSeq-1, m.Prev)
		}
		fmt.Fprintf(w, "  last (hash of entry %d): %s\n", m.ToSeq, m.LastHash)
	} else {
		fmt.Fprintf(w, "wrote %s: entries %d..%d (%s), last hash %s\n",
			out, m.FromSeq, m.ToSeq, plural(m.Entries, "entry", "entries"), m.LastHash)
	}
	fmt.Fprintf(w, "wrote %s: %s and %s\n", ledger.BundlePath(out), plural(uint64(m.Blobs), "blob", "blobs"), ledger.ManifestName)
	fmt.Fprintf(w, "ledger %s, head %d %s\n", m.LedgerID, m.HeadSeq, m.HeadHash)
	return nil
}
