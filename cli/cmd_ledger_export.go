package cli

import (
	"fmt"

	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/opx-dev/opx/ledger"
	"github.com/urfave/cli/v2"
)

func ledgerExportCommand() *cli.Command {
	cmd := &cli.Command{
		Name:      "export",
		Usage:     "write the ledger, or one session's segment, as JSONL with its blobs",
		UsageText: "opx ledger export (-o FILE [--session ID] | --tiles DIR | --format ocsf [-o FILE] [--session ID] [--follow [--cursor FILE]] | --format otlp --endpoint URL [--protocol grpc|http] [--insecure] [--session ID]) [--json] [--ledger PATH | --workspace DIR]",
		Description: "Writes one entry per line, the stored bytes verbatim (zstd-compressed when FILE ends in .zst),\n" +
			"and the blobs the entries name plus a manifest to the bundle NAME.blobs/ beside it. Nothing is\n" +
			"overwritten. The chain is checked while exporting: a damaged ledger is not exported.\n" +
			"With --session, the export is the contiguous segment from the session's first entry to its last,\n" +
			"including other sessions' entries in between (the chain runs through them); the manifest names\n" +
			"the hashes at both ends so the segment can be tied to the full ledger.\n" +
			"While an engine holds the ledger, export reads it through the engine up to its durable head when\n" +
			"export starts, checking every entry and blob here: the files are the same as an offline export of that head.\n" +
			"When the ledger signs checkpoints, the manifest also carries the latest signed checkpoint, the\n" +
			"verifier key recorded before it, and inclusion proofs of the export's first entry and of the last\n" +
			"one the checkpoint covers, so that `opx ledger verify EXPORT --key KEY` proves the export's place\n" +
			"in the full ledger (through a running engine, the same material is computed here from the entries).\n\n" +
			"With --tiles DIR, writes instead the tree of the latest signed checkpoint as a static C2SP\n" +
			"tlog-tiles tree in DIR (which must not exist): checkpoint, tile/<L>/<N>[.p/<W>] and the entry\n" +
			"bundles tile/entries/<N>[.p/<W>], for any tlog client to fetch and verify. An entry bundle\n" +
			"prefixes each entry with a 16-bit length: a tree holding an entry over 65535 bytes is refused\n" +
			"(exit 1, nothing written; a JSONL export holds it). Files are 0600: make them readable to serve them.\n" +
			"While an engine holds the ledger, the tree is computed here from the entries it sends up to its durable\n" +
			"head, and written only if its root is the signed checkpoint's: the same files as an offline export.\n\n" +
			ocsfExportHelp + "\n" +
			"With --format otlp, sends the entries (of one session with --session) to the OTLP collector at\n" +
			"--endpoint as OpenTelemetry spans and events, with their original timestamps and ids derived from\n" +
			"the ledger, so exporting again sends the same spans; each names its entry's seq and hash\n" +
			"(docs/telemetry.md). Content only with --content.\n\n" +
			exitCodesHelp("integrity failure found: the ledger is damaged, nothing was exported"),
		HideHelpCommand: true,
		Flags: append(append(ledgerloc.Flags(), ledgerExportOTLPFlags()...),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "export `FILE` (.jsonl or .jsonl.zst; required)", TakesFile: true},
			&cli.StringFlag{Name: "session", Usage: "export only the segment covering session `ID`"},
			&cli.StringFlag{Name: "tiles", Usage: "write the tree of the latest signed checkpoint as a static tlog-tiles tree in `DIR`", TakesFile: true},
			&cli.StringFlag{Name: "format", Value: "jsonl", Usage: "`FORMAT` of the export: jsonl (the entries), ocsf (OCSF events for SIEMs) or otlp (OpenTelemetry spans sent to --endpoint)"},
			ui.JSONFlag(),
		),
		Action: runLedgerExport,
	}
	cmd.Flags = append(cmd.Flags, ocsfExportFlags()...)
	return cmd
}

func runLedgerExport(c *cli.Context) error {
	if _, err := wantArgs(c, 0, 0, ""); err != nil {
		return err
	}
	switch f := c.String("format"); f {
	case "jsonl":
		if c.IsSet("follow") || c.IsSet("cursor") || c.IsSet("host") {
			return usage.Errorf(c, "--follow, --cursor and --host are for --format ocsf")
		}
		for _, name := range []string{"endpoint", "protocol", "insecure", "header", "content"} {
			if c.IsSet(name) {
				return usage.Errorf(c, "--%s is for --format otlp", name)
			}
		}
	case "ocsf":
		return runLedgerExportOCSF(c) // cmd_ledger_export_ocsf.go
	case "otlp":
		return runLedgerExportOTLP(c) // cmd_ledger_export_otlp.go
	default:
		return usage.Errorf(c, "--format %q: want jsonl, ocsf or otlp", ui.Clip(f, 40))
	}
	out := c.String("output")
	if c.IsSet("tiles") {
		if out != "" || c.IsSet("session") {
			return usage.Errorf(c, "--tiles writes the whole tree; give neither -o nor --session with it")
		}
		return runExportTiles(c, c.String("tiles"))
	}
	if out == "" {
		return usage.Errorf(c, "missing -o FILE")
	}
	rv, err := openReviewOrEngine(c)
	if err != nil {
		return err
	}
	defer rv.Close()
	bar := ui.NewProgress(c, "export")
	opts := ledger.ExportOptions{Session: c.String("session"), Progress: bar.Update}
	var m *ledger.Manifest
	if rv.local != nil {
		m, err = rv.local.ExportFile(out, opts)
	} else {
		// Through the engine, up to its durable head when export
		// starts: the same files an offline export of that head writes,
		// every entry and blob checked here.
		m, err = ledger.ExportSourceFile(rv.remote, out, opts)
	}
	bar.Finish()
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return ui.WriteJSON(c, m)
	}
	w := c.App.Writer
	if m.Session != "" {
		fmt.Fprintf(w, "wrote %s: segment of session %q, entries %d..%d (%s)\n",
			out, m.Session, m.FromSeq, m.ToSeq, ui.Plural(m.Entries, "entry", "entries"))
		fmt.Fprintf(w, "  entries of other sessions inside that range are included: the chain runs through them\n")
		if m.FromSeq > 0 {
			fmt.Fprintf(w, "  prev (hash of entry %d): %s\n", m.FromSeq-1, m.Prev)
		}
		fmt.Fprintf(w, "  last (hash of entry %d): %s\n", m.ToSeq, m.LastHash)
	} else {
		fmt.Fprintf(w, "wrote %s: entries %d..%d (%s), last hash %s\n",
			out, m.FromSeq, m.ToSeq, ui.Plural(m.Entries, "entry", "entries"), m.LastHash)
	}
	fmt.Fprintf(w, "wrote %s: %s and %s\n", ledger.BundlePath(out), ui.Plural(uint64(m.Blobs), "blob", "blobs"), ledger.ManifestName)
	fmt.Fprintf(w, "ledger %s, head %d %s\n", m.LedgerID, m.HeadSeq, m.HeadHash)
	return nil
}

// runExportTiles is `opx ledger export --tiles DIR`.
func runExportTiles(c *cli.Context, dir string) error {
	rv, err := openReviewOrEngine(c)
	if err != nil {
		return err
	}
	defer rv.Close()
	var te *ledger.TilesExport
	if rv.local != nil {
		te, err = rv.local.ExportTiles(dir)
	} else {
		// Through the engine: the tree of the latest signed checkpoint up
		// to its durable head, computed here from the entries it sends
		// and checked against the signed root.
		te, err = ledger.ExportTilesSource(rv.remote, dir)
	}
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return ui.WriteJSON(c, map[string]any{"dir": dir, "tree_size": te.TreeSize, "root_hash": te.Root, "tiles": te.Tiles, "entry_bundles": te.Bundles})
	}
	fmt.Fprintf(c.App.Writer, "wrote %s: tree %d root %s (%s, %s) and its signed checkpoint\n", dir, te.TreeSize, te.Root,
		ui.Plural(uint64(te.Tiles), "tile", "tiles"), ui.Plural(uint64(te.Bundles), "entry bundle", "entry bundles"))
	return nil
}
